//! What a selection met, and the notes on stderr it leads to: that
//! nothing matched (and how much was searched), and that `-w`, which
//! selects whole messages, brought along objects that do not match.

use std::sync::{Arc, Mutex};

/// Counts of one command's selection.
#[derive(Debug, Clone, Default)]
pub struct Tally(Arc<Mutex<Counts>>);

#[derive(Debug, Default)]
struct Counts {
    messages: usize,
    objects: usize,
    matched: usize,
    brought: usize,
}

impl Tally {
    /// Counts one message of `objects` objects, `matched` of them matching
    /// the clauses and `brought` kept without matching them.
    pub fn message(&self, objects: usize, matched: usize, brought: usize) {
        let mut c = self.0.lock().unwrap_or_else(|e| e.into_inner());
        c.messages += 1;
        c.objects += objects;
        c.matched += matched;
        c.brought += brought;
    }

    /// The notes for `command` selecting with `clauses` (as typed, for
    /// the messages): none when no clause was given.
    pub fn notes(&self, command: &str, clauses: &[String]) -> Vec<String> {
        if clauses.is_empty() {
            return Vec::new();
        }
        let c = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let what = clauses.join(",");
        let mut out = Vec::new();
        if c.matched == 0 {
            out.push(format!(
                "tgm {command}: no object matched {what} (searched {} message{}, {} object{})",
                c.messages,
                plural(c.messages),
                c.objects,
                plural(c.objects)
            ));
        }
        if c.brought > 0 {
            out.push(format!(
                "tgm {command}: -w selects whole messages, so {} object{} that do{} not match \
                 {what} came along with {}; --objects {what} keeps only the matching objects",
                c.brought,
                plural(c.brought),
                if c.brought == 1 { "es" } else { "" },
                if c.brought == 1 {
                    "its message"
                } else {
                    "their messages"
                }
            ));
        }
        out
    }

    /// Writes [`Self::notes`] on stderr.
    pub fn report(&self, command: &str, clauses: &[String]) {
        for n in self.notes(command, clauses) {
            note!("{n}");
        }
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_say_what_was_searched_and_what_came_along() {
        let w = vec!["mars.param=130".to_string()];
        let t = Tally::default();
        t.message(2, 0, 0);
        t.message(1, 0, 0);
        let n = t.notes("ls", &w);
        assert_eq!(
            n,
            ["tgm ls: no object matched mars.param=130 (searched 2 messages, 3 objects)"]
        );
        assert!(t.notes("ls", &[]).is_empty());
        let t = Tally::default();
        t.message(3, 1, 2);
        let n = t.notes("stats", &w);
        assert_eq!(n.len(), 1, "{n:?}");
        assert!(
            n[0].contains("2 objects that do not match mars.param=130"),
            "{n:?}"
        );
        assert!(n[0].contains("--objects mars.param=130"), "{n:?}");
    }
}
