1INSERT INTO machine VALUES(1,'fp1','h','cpu','avx2',2,4,32768,1048576,33554432,8e9,'linux','gcc','openblas','',1,'2024-01-01T00:00:00Z');
INSERT INTO run(id,uuid,machine_id,suite,status,started_at,finished_at,config_json,seed) VALUES(1,'u-1',1,'baseline','complete','2024-01-01T00:00:01Z','2024-01-01T00:01:00Z','{}',1);
INSERT INTO result(id,run_id,suite,bench,params_json,variant,threads,unit,n,min,median,mean,stddev,mad,ci_low,ci_high,outliers,flops,bytes,check_err,status) VALUES(1,1,'baseline','sgemv','{"m":64,"n":64}','avx2',1,'s',3,1e-6,1.1e-6,1.2e-6,1e-8,1e-8,1e-6,1.3e-6,0,8192,16640,0,'ok');
INSERT INTO sample VALUES(1,0,1e-6,1e-6),(1,1,1.1e-6,NULL),(1,2,1.2e-6,NULL);
INSERT INTO counter VALUES(1,'PAPI_TOT_CYC',1234,1,NULL,1),(1,'PAPI_L1_DCM',NULL,0,'not supported',NULL);
INSERT INTO metric(run_id,workload,step,key,value,unit) VALUES(1,'mlp',0,'val_loss',2.3,'nats'),(1,'mlp',NULL,'test_accuracy',0.9,NULL);
INSERT INTO ceiling(machine_id,run_id,kind,threads,value,unit,method,created_at) VALUES(1,1,'bw_dram',1,10.5,'GB/s','read','2024-01-01T00:00:02Z');
INSERT INTO workload_ident VALUES(1,'mlp','{"kind":"quant_acc"}');
PRAGMA foreign_keys=OFF; DROP TABLE sample; CREATE TABLE sample(x); ALTER TABLE result DROP COLUMN bound; DROP TABLE metric;
