1DROP TABLE ocbench_meta;
