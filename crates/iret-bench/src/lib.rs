//! `iret bench`: retrieval quality and speed on semble-format benchmarks, and file
//! localisation on issue-style datasets and a repository's own history.
pub mod checkout;
pub mod dataset;
pub mod features;
pub mod history;
pub mod localise;
pub mod metrics;
pub mod pairs;
pub mod report;
pub mod runner;

/// The index `Serve` pushes (an opened index of the index crate).
pub use iret_index::Index as ServedIndex;
pub use runner::{run_bench, Config, Mode, RepoRun, Serve};
