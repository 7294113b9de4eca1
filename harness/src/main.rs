//! iobound: arguments -> plan -> services -> contenders -> driver -> results -> report.
//! Everything lives in the library (lib.rs); this is the process's entry and exit.

fn main() {
    let code = match iobound::cli::main() {
        Ok(code) => code,
        Err(e) => {
            // The message may quote a path or a field as it was given: printed escaped.
            eprintln!(
                "iobound: error: {}",
                iobound::util::printable::printable(&format!("{e:#}"))
            );
            1
        }
    };
    iobound::util::interrupt::kill_all(libc::SIGKILL);
    std::process::exit(code);
}
