//! The SZ3 child of this package's tests: the library's entry point and
//! nothing else (`spec/pipeline.md` §4.7).

fn main() {
    tgm::sz3_child::run_child_if_requested();
    std::process::exit(2);
}
