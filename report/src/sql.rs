//! The SQL of the cross-rank report, in one place: the per-operation and
//! per-rank tables are views over the loaded tables (see [`crate::load`]),
//! so `syclgraph query` can select from them too.
//!
//! A rank's device time in an operation is the sum of `summary.total_ns`
//! over that rank's nodes of the same kind and name. The median of an even
//! number of ranks is the mean of the two middle ones; the standard
//! deviation is the population one (over the ranks that ran the operation).

use rusqlite::functions::FunctionFlags;
use rusqlite::Connection;

/// Registers `sqrt(x)`, which SQLite's amalgamation is built without here.
pub fn register_functions(db: &Connection) -> rusqlite::Result<()> {
    db.create_scalar_function(
        "sqrt",
        1,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| {
            let x: Option<f64> = ctx.get(0)?;
            Ok(x.filter(|x| *x >= 0.0).map(f64::sqrt))
        },
    )
}

/// The views the report reads, created once the tables are loaded.
pub const VIEWS: &str = "
-- One row per (operation, rank): the rank's calls and device time. An
-- operation is a kind, a name and a source location (kernels that the
-- runtime names alike, OpenCL interop ones, differ by where they are
-- submitted). The device time is NULL when no call was timed (mean_ns is
-- empty then: SYCLGRAPH_DEVICE_TIMING=0, or no device timestamps).
CREATE TEMP VIEW op_rank AS
SELECT kind, name, source_file, source_line, rank,
       SUM(count) AS calls,
       CASE WHEN COUNT(mean_ns) > 0 THEN SUM(total_ns) END AS device_ns
FROM summary
GROUP BY kind, name, source_file, source_line, rank;

-- One row per operation across the ranks that ran it; the device time
-- figures over the ranks that timed it (untimed ranks sort last).
CREATE TEMP VIEW operations AS
WITH ordered AS (
  SELECT *,
         ROW_NUMBER() OVER (PARTITION BY kind, name, source_file, source_line
                            ORDER BY device_ns IS NULL, device_ns, rank DESC) AS pos,
         COUNT(device_ns) OVER (PARTITION BY kind, name, source_file, source_line) AS n
  FROM op_rank
),
stats AS (
  SELECT kind, name, source_file, source_line,
         COUNT(*) AS ranks, SUM(calls) AS calls,
         MIN(device_ns) AS min_ns,
         AVG(CASE WHEN pos IN ((n + 1) / 2, (n + 2) / 2) THEN device_ns END) AS median_ns,
         MAX(device_ns) AS max_ns,
         AVG(device_ns) AS mean_ns,
         sqrt(MAX(AVG(device_ns * device_ns) - AVG(device_ns) * AVG(device_ns), 0)) AS stddev_ns,
         MAX(CASE WHEN pos = n THEN rank END) AS slowest_rank,
         MAX(CASE WHEN pos = 1 AND n > 0 THEN rank END) AS fastest_rank
  FROM ordered
  GROUP BY kind, name, source_file, source_line
)
SELECT kind, name, source_file, source_line, ranks, calls, min_ns,
       ROUND(median_ns) AS median_ns, max_ns, ROUND(mean_ns) AS mean_ns,
       ROUND(stddev_ns) AS stddev_ns, slowest_rank,
       ROUND(max_ns - median_ns) AS excess_ns, fastest_rank
FROM stats;

-- One row per rank directory: what the rank's files say about the whole run.
CREATE TEMP VIEW ranks AS
WITH spans AS (
  SELECT rank, MAX(end_ns) - MIN(submit_ns) AS span_ns,
         SUM(timing IS NOT 'ok') AS untimed
  FROM kernels GROUP BY rank
),
paths AS (
  SELECT rank, MAX(end_ns) - MIN(start_ns) AS critical_path_ns
  FROM critical_path GROUP BY rank
),
busy AS (
  SELECT rank, SUM(idle_ns) AS busy_ns, COUNT(*) AS devices
  FROM idle_gaps WHERE row = 'total' AND scope = 'device' AND cause = 'busy'
  GROUP BY rank
),
device AS (
  SELECT rank, CASE WHEN COUNT(mean_ns) > 0 THEN SUM(total_ns) END AS device_ns
  FROM summary GROUP BY rank
),
per_rank AS (
  SELECT m.rank, m.host, m.sampled, m.complete,
         d.device_ns, s.span_ns, p.critical_path_ns,
         ROUND(CAST(b.busy_ns AS REAL) / (s.span_ns * b.devices), 4) AS busy_share,
         s.untimed, m.dropped
  FROM meta m
  LEFT JOIN device d USING (rank)
  LEFT JOIN spans s USING (rank)
  LEFT JOIN paths p USING (rank)
  LEFT JOIN busy b USING (rank)
),
ordered AS (
  SELECT device_ns, ROW_NUMBER() OVER (ORDER BY device_ns) AS pos, COUNT(*) OVER () AS n
  FROM per_rank WHERE device_ns IS NOT NULL
),
median AS (
  SELECT AVG(device_ns) AS median_ns FROM ordered WHERE pos IN ((n + 1) / 2, (n + 2) / 2)
)
SELECT r.*, ROUND(r.device_ns - median.median_ns) AS vs_median_ns
FROM per_rank r, median;

-- One row per region (regions.csv's path) across the ranks that entered
-- it: the device time of the commands submitted inside it per rank, as
-- for the operations, and its host time.
CREATE TEMP VIEW region_ranks AS
WITH ordered AS (
  SELECT *,
         ROW_NUMBER() OVER (PARTITION BY region
                            ORDER BY timed = 0, device_ns, rank DESC) AS pos,
         SUM(timed > 0) OVER (PARTITION BY region) AS n
  FROM regions
),
stats AS (
  SELECT region, MAX(name) AS name, MAX(depth) AS depth,
         COUNT(*) AS ranks, SUM(count) AS count, SUM(commands) AS commands,
         MIN(CASE WHEN timed > 0 THEN device_ns END) AS min_ns,
         AVG(CASE WHEN pos IN ((n + 1) / 2, (n + 2) / 2) AND timed > 0 THEN device_ns END) AS median_ns,
         MAX(CASE WHEN timed > 0 THEN device_ns END) AS max_ns,
         MAX(CASE WHEN pos = n AND timed > 0 THEN rank END) AS slowest_rank,
         MAX(CASE WHEN pos = 1 AND n > 0 THEN rank END) AS fastest_rank,
         MAX(host_ns) AS max_host_ns
  FROM ordered
  GROUP BY region
)
SELECT region, name, depth, ranks, count, commands, min_ns,
       ROUND(median_ns) AS median_ns, max_ns, slowest_rank,
       ROUND(max_ns - median_ns) AS excess_ns, fastest_rank, max_host_ns
FROM stats;
";

/// The report's table of regions, the most device time on their slowest
/// rank first.
pub const REGIONS: &str =
    "SELECT * FROM region_ranks ORDER BY max_ns IS NULL, max_ns DESC, max_host_ns DESC, region";

/// The report's table of operations, most imbalanced first.
pub const OPERATIONS: &str =
    "SELECT * FROM operations ORDER BY excess_ns DESC, max_ns DESC, kind, name";

/// The report's table of ranks, furthest from the median device time first.
pub const RANKS_BY_DISTANCE: &str =
    "SELECT * FROM ranks ORDER BY ABS(vs_median_ns) IS NULL, ABS(vs_median_ns) DESC, rank";

/// The ranks, by rank (the `ranks.csv` order).
pub const RANKS: &str = "SELECT * FROM ranks ORDER BY rank";
