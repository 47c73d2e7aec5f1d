//! The `hql` command: a thin shell around the library (tooling.md). The
//! arguments are `cli::args`, the commands `cli::commands`.

use std::process::ExitCode;

use clap::Parser;

/// The command runs on a thread with a deep stack: the phases recurse as
/// deep as a statement nests (`hql::syntax::limits`).
fn main() -> ExitCode {
    hql::syntax::limits::with_stack(|| hql::cli::commands::run(hql::cli::args::Cli::parse()))
}

/// Was standard output closed when the process started (`hql run p.hql
/// >&-`)? Before `main`, the Rust runtime opens `/dev/null` on a closed
/// standard descriptor (so that no file opened later takes its number),
/// which would make every write to a closed output succeed unseen. On
/// Linux this asks first, from the program's initialisers, which run
/// before the runtime's; elsewhere a closed output is `/dev/null`.
#[cfg(target_os = "linux")]
mod closed_stdout {
    extern "C" fn probe() {
        // SAFETY: `fcntl(1, F_GETFD)` only reads the descriptor table; it
        // fails (with `EBADF`) exactly when the descriptor is closed.
        if unsafe { libc::fcntl(1, libc::F_GETFD) } == -1 {
            hql::cli::output::mark_stdout_closed();
        }
    }

    #[used]
    #[link_section = ".init_array"]
    static PROBE: extern "C" fn() = probe;
}
