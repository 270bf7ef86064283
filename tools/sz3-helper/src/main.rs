//! The SZ3 decoder's helper process (`spec/pipeline.md` §4.7): started by
//! the library with its standard input a socket, never by hand.

fn main() {
    tgm::sz3_child::run_child_if_requested();
    eprintln!(
        "tgm-sz3-helper is started by the tgm library (argument {}), not by hand",
        tgm::sz3_child::CHILD_ARG
    );
    std::process::exit(2);
}
