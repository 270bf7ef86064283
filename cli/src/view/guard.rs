//! Who may ask: the `Host` a request names must be the viewer's own
//! loopback name and port, and an `Origin` sent with a request for data
//! must be the viewer's own origin, so that a page whose DNS name was
//! rebound to 127.0.0.1 reads nothing (`spec/wasm.md` §3).

/// The names the viewer answers to: `127.0.0.1`, `localhost` and `[::1]`
/// with the port it listens on.
#[derive(Debug, Clone)]
pub struct Guard {
    hosts: Vec<String>,
    port: u16,
}

/// Why a request is refused.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    /// No `Host`, or several (`400`, RFC 9112 §3.2).
    BadHost,
    /// Another `Host` (`403`).
    ForeignHost,
    /// Another `Origin` (`403`).
    ForeignOrigin,
}

impl Guard {
    /// The guard of a viewer listening on loopback `port`.
    pub fn loopback(port: u16) -> Guard {
        Guard {
            hosts: vec!["127.0.0.1".into(), "localhost".into(), "[::1]".into()],
            port,
        }
    }

    /// The names accepted, for messages.
    pub fn names(&self) -> String {
        let v: Vec<String> = self
            .hosts
            .iter()
            .map(|h| format!("{h}:{}", self.port))
            .collect();
        v.join(", ")
    }

    /// Whether `authority` (`host[:port]`) is one of the viewer's names;
    /// the port may be left out only when it is 80.
    fn own(&self, authority: &str) -> bool {
        let (host, port) = match authority.rsplit_once(':') {
            Some((h, p)) if !p.contains(']') => (h, p.parse::<u16>().ok()),
            _ => (authority, Some(80)),
        };
        port == Some(self.port) && self.hosts.iter().any(|h| h.eq_ignore_ascii_case(host))
    }

    /// Checks the `Host` values of a request, and for data its `Origin`.
    pub fn check<'a>(
        &self,
        mut hosts: impl Iterator<Item = &'a str>,
        origin: Option<&str>,
        data: bool,
    ) -> Result<(), Refusal> {
        let (Some(host), None) = (hosts.next(), hosts.next()) else {
            return Err(Refusal::BadHost);
        };
        if !self.own(host) {
            return Err(Refusal::ForeignHost);
        }
        match origin {
            Some(o) if data => match o.strip_prefix("http://") {
                Some(a) if self.own(a) => Ok(()),
                _ => Err(Refusal::ForeignOrigin),
            },
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_loopback_names_with_the_port_pass() {
        let g = Guard::loopback(8735);
        let host = |h: &str| g.check([h].into_iter(), None, true);
        for ok in [
            "127.0.0.1:8735",
            "localhost:8735",
            "LOCALHOST:8735",
            "[::1]:8735",
        ] {
            assert_eq!(host(ok), Ok(()), "{ok}");
        }
        for bad in [
            "evil.example:8735",
            "127.0.0.1",
            "127.0.0.1:8736",
            "127.0.0.1:08735x",
            "localhost.:8735",
            "[::1]",
            "",
        ] {
            assert_eq!(host(bad), Err(Refusal::ForeignHost), "{bad}");
        }
        assert_eq!(g.check([].into_iter(), None, false), Err(Refusal::BadHost));
        let two = ["127.0.0.1:8735", "127.0.0.1:8735"];
        assert_eq!(g.check(two.into_iter(), None, false), Err(Refusal::BadHost));
        assert_eq!(
            Guard::loopback(80).check(["localhost"].into_iter(), None, false),
            Ok(())
        );
    }

    #[test]
    fn a_foreign_origin_is_refused_for_data_only() {
        let g = Guard::loopback(8735);
        let h = || ["127.0.0.1:8735"].into_iter();
        assert_eq!(g.check(h(), Some("http://localhost:8735"), true), Ok(()));
        for bad in [
            "http://evil.example",
            "null",
            "https://127.0.0.1:8735",
            "http://127.0.0.1:1",
        ] {
            assert_eq!(
                g.check(h(), Some(bad), true),
                Err(Refusal::ForeignOrigin),
                "{bad}"
            );
            assert_eq!(g.check(h(), Some(bad), false), Ok(()), "{bad}");
        }
    }
}
