-- ocbench store, schema version 3 (PRAGMA user_version). DESIGN.md "The store".
-- Column names are a contract for reports, compare, merge and outside scripts:
-- add columns freely (with a migration), rename none.
-- Times: seconds in sample.value unless result.unit says otherwise; timestamps UTC ISO-8601.

CREATE TABLE IF NOT EXISTS machine (
  id INTEGER PRIMARY KEY,
  fingerprint TEXT NOT NULL UNIQUE,
  hostname TEXT, cpu_model TEXT, isa TEXT,
  cores INTEGER, threads INTEGER,
  l1d_bytes INTEGER, l2_bytes INTEGER, l3_bytes INTEGER, mem_bytes INTEGER,
  os TEXT, compiler TEXT, blas TEXT, papi_version TEXT, is_vm INTEGER,
  created_at TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS run (
  id INTEGER PRIMARY KEY,
  uuid TEXT NOT NULL UNIQUE,
  machine_id INTEGER NOT NULL REFERENCES machine(id),
  suite TEXT NOT NULL,
  label TEXT,
  status TEXT NOT NULL CHECK (status IN ('running','complete','failed','aborted')),
  ocbench_version TEXT, git_sha TEXT, cmdline TEXT, config_json TEXT,
  seed INTEGER, pid INTEGER, hostname TEXT,
  boot_id TEXT,              -- /proc/sys/kernel/random/boot_id of the writer: with pid and
                             -- hostname it tells whether a 'running' run's process still lives
  started_at TEXT NOT NULL,
  finished_at TEXT
);
CREATE INDEX IF NOT EXISTS run_machine ON run(machine_id, started_at);

CREATE TABLE IF NOT EXISTS ceiling (
  id INTEGER PRIMARY KEY,
  machine_id INTEGER NOT NULL REFERENCES machine(id),
  run_id INTEGER REFERENCES run(id) ON DELETE SET NULL,
  kind TEXT NOT NULL,        -- flops_fp32, flops_sgemm, bw_l1 .. bw_dram, bw_*_triad
  threads INTEGER NOT NULL,
  value REAL NOT NULL,
  unit TEXT NOT NULL,        -- GFLOP/s | GB/s
  method TEXT,
  created_at TEXT NOT NULL,
  trials INTEGER,            -- independent best-of trials behind value
  spread REAL,               -- (best - worst) / best over those trials
  suspect TEXT               -- NULL, or why the value failed a consistency rule
);
CREATE INDEX IF NOT EXISTS ceiling_machine ON ceiling(machine_id, kind, threads);

CREATE TABLE IF NOT EXISTS result (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
  suite TEXT NOT NULL,
  bench TEXT NOT NULL,
  params_json TEXT NOT NULL, -- canonical: sorted keys, no spaces
  variant TEXT,
  threads INTEGER,
  unit TEXT NOT NULL DEFAULT 's',
  n INTEGER, min REAL, median REAL, mean REAL, stddev REAL, mad REAL,
  ci_low REAL, ci_high REAL, outliers INTEGER,
  flops REAL, bytes REAL,    -- static work model of one repetition
  check_err REAL,
  bound TEXT,                -- ceiling kind bounding the case
  bound_frac REAL,           -- achieved / that ceiling
  timing_only INTEGER NOT NULL DEFAULT 0,
  status TEXT NOT NULL CHECK (status IN ('ok','failed','skipped')),
  error TEXT,
  suspect TEXT               -- NULL, or why an ok result is not to be trusted (CI too wide,
                             -- N threads slower than 1, above its roof)
);
CREATE INDEX IF NOT EXISTS result_run ON result(run_id);
CREATE INDEX IF NOT EXISTS result_case ON result(bench, params_json);

CREATE TABLE IF NOT EXISTS sample (
  result_id INTEGER NOT NULL REFERENCES result(id) ON DELETE CASCADE,
  rep INTEGER NOT NULL,
  value REAL NOT NULL,
  cpu_s REAL,                -- process CPU seconds (all threads) of the same repetition,
                             -- per call like value; NULL when not measured (v3)
  PRIMARY KEY (result_id, rep)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS counter (
  result_id INTEGER NOT NULL REFERENCES result(id) ON DELETE CASCADE,
  event TEXT NOT NULL,
  value REAL,                -- NULL when unavailable, never 0 for "not counted"
  available INTEGER NOT NULL,
  reason TEXT,
  multiplex_ratio REAL,
  PRIMARY KEY (result_id, event)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS metric (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
  workload TEXT NOT NULL,
  step INTEGER,
  key TEXT NOT NULL,         -- lower_snake_case
  value REAL,
  unit TEXT
);
CREATE INDEX IF NOT EXISTS metric_run ON metric(run_id, workload, key);

-- The identity of a structured workload (common/workload_id.h), one row per run and
-- metric workload name: JSON with a "kind" ("quant_acc": model, method, rounding, bits,
-- group). The report reads it instead of splitting the name (schema v4).
CREATE TABLE IF NOT EXISTS workload_ident (
  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
  workload TEXT NOT NULL,
  ident TEXT NOT NULL,
  PRIMARY KEY (run_id, workload)
) WITHOUT ROWID;

-- Identifies the file as ocbench's (together with user_version).
CREATE TABLE IF NOT EXISTS ocbench_meta (
  key TEXT PRIMARY KEY,
  value TEXT
);
