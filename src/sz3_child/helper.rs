//! Which program runs SZ3's decoder: the settings and the order they are
//! tried in (`spec/pipeline.md` §4.7).

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::RwLock;

use crate::error::{Error, Result};

/// The argument every located helper is started with, and that
/// [`run_child_if_requested`](super::run_child_if_requested) looks for.
pub const CHILD_ARG: &str = "--tgm-sz3-child";

/// The environment variable naming a helper executable.
pub const HELPER_ENV: &str = "TGM_SZ3_HELPER";

/// The helper executable of the workspace package `tgm-sz3-helper`
/// (`tools/sz3-helper`), looked for next to the running executable.
pub const HELPER_NAME: &str = "tgm-sz3-helper";

/// A command that starts an SZ3 child: a program and its arguments. The
/// child speaks on its standard input (a socket) and must call
/// [`serve`](super::serve) at once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Helper {
    program: PathBuf,
    args: Vec<OsString>,
}

impl Helper {
    /// `program` run with no arguments.
    pub fn new(program: impl Into<PathBuf>) -> Self {
        Helper {
            program: program.into(),
            args: Vec::new(),
        }
    }

    /// `program` run with [`CHILD_ARG`]: a helper executable, or a program
    /// that calls [`run_child_if_requested`](super::run_child_if_requested)
    /// first thing in `main`.
    pub fn executable(program: impl Into<PathBuf>) -> Self {
        Helper::new(program).arg(CHILD_ARG)
    }

    /// Adds one argument.
    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// The program.
    pub fn program(&self) -> &std::path::Path {
        &self.program
    }

    /// The arguments.
    pub fn args(&self) -> &[OsString] {
        &self.args
    }

    /// The command as one line, for messages.
    pub(crate) fn describe(&self) -> String {
        let mut s = self.program.display().to_string();
        for a in &self.args {
            s.push(' ');
            s.push_str(&a.to_string_lossy());
        }
        s
    }
}

/// The settings, highest priority first.
struct Settings {
    /// [`set_helper`].
    explicit: Option<Helper>,
    /// [`set_host_helper`], or this executable after
    /// [`run_child_if_requested`](super::run_child_if_requested).
    host: Option<Helper>,
}

static SETTINGS: RwLock<Settings> = RwLock::new(Settings {
    explicit: None,
    host: None,
});

/// Sets the helper every later SZ3 decode of this process starts (`None`
/// goes back to the search). It wins over `TGM_SZ3_HELPER` and the host's
/// helper; children already running for another helper are stopped.
pub fn set_helper(helper: Option<Helper>) {
    if let Ok(mut s) = SETTINGS.write() {
        s.explicit = helper;
    }
    super::forget_idle_children();
}

/// Offers the host's own way of starting a child (the CLI re-running
/// itself, Python its interpreter), used when neither [`set_helper`] nor
/// `TGM_SZ3_HELPER` names one.
pub fn set_host_helper(helper: Helper) {
    if let Ok(mut s) = SETTINGS.write() {
        s.host = Some(helper);
    }
}

/// The helper to start: [`set_helper`]'s, then the program named by
/// `TGM_SZ3_HELPER`, then the host's ([`set_host_helper`]), then
/// `tgm-sz3-helper` next to the running executable; an error naming each
/// way of providing one when none is found.
pub(crate) fn locate() -> Result<Helper> {
    let (explicit, host) = match SETTINGS.read() {
        Ok(s) => (s.explicit.clone(), s.host.clone()),
        Err(_) => (None, None),
    };
    if let Some(h) = explicit {
        return Ok(h);
    }
    if let Some(p) = std::env::var_os(HELPER_ENV).filter(|p| !p.is_empty()) {
        return Ok(Helper::executable(p));
    }
    if let Some(h) = host {
        return Ok(h);
    }
    let sibling = std::env::current_exe()
        .ok()
        .and_then(|e| Some(e.parent()?.join(HELPER_NAME)));
    if let Some(p) = sibling.as_ref().filter(|p| p.is_file()) {
        return Ok(Helper::executable(p));
    }
    Err(Error::codec(format!(
        "sz3 decoding runs in a helper process and none was found: set {HELPER_ENV} to the \
         {HELPER_NAME} executable (cargo build --release -p {HELPER_NAME}), put it \
         next to this program{}, call tgm::sz3_child::set_helper, or call \
         tgm::sz3_child::run_child_if_requested at the start of main",
        sibling
            .as_ref()
            .and_then(|p| p.parent())
            .map(|d| format!(" ({})", d.display()))
            .unwrap_or_default()
    )))
}
