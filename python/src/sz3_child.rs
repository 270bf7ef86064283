//! SZ3 decodes of the Python module run in a child started from this
//! interpreter, loading this extension module by its path
//! (`spec/pipeline.md` §4.7). Without the `sz3` feature both functions
//! do nothing.

use pyo3::prelude::*;

/// Loads the extension module at `sys.argv[1]` without importing the
/// package (so nothing but the module runs) and serves.
#[cfg(feature = "sz3")]
const CHILD_CODE: &str = "import sys, importlib.util as u\n\
s = u.spec_from_file_location('tgm._native', sys.argv[1])\n\
m = u.module_from_spec(s)\n\
s.loader.exec_module(m)\n\
m._sz3_child()\n";

/// Makes `interpreter -I -c CHILD_CODE module_path` the host's helper.
#[pyfunction]
pub fn _sz3_use_interpreter(interpreter: &str, module_path: &str) {
    #[cfg(feature = "sz3")]
    if !interpreter.is_empty() {
        tgm::sz3_child::set_host_helper(
            tgm::sz3_child::Helper::new(interpreter)
                .arg("-I")
                .arg("-c")
                .arg(CHILD_CODE)
                .arg(module_path),
        );
    }
    #[cfg(not(feature = "sz3"))]
    let _ = (interpreter, module_path);
}

/// The child's entry point: serves on standard input and ends the process.
#[pyfunction]
pub fn _sz3_child() {
    #[cfg(all(feature = "sz3", target_os = "linux"))]
    tgm::sz3_child::serve();
}
