//! Who may ask: the `Host` a request names must be the loopback address
//! the viewer bound (or `localhost`) with its port, and an `Origin` sent
//! with a request for data must be the origin that `Host` names, so that
//! a page whose DNS name was rebound to 127.0.0.1 reads nothing
//! (`spec/wasm.md` §3).

use std::net::{IpAddr, SocketAddr};

/// The names the viewer answers to: the loopback address it bound
/// (`127.0.0.1` or `[::1]`) and `localhost`, with the port it listens on.
#[derive(Debug, Clone)]
pub struct Guard {
    hosts: [&'static str; 2],
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
    /// The guard of a viewer listening on `bound`.
    pub fn bound(bound: SocketAddr) -> Guard {
        let address = match bound.ip() {
            IpAddr::V4(_) => "127.0.0.1",
            IpAddr::V6(_) => "[::1]",
        };
        Guard {
            hosts: [address, "localhost"],
            port: bound.port(),
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

    /// Which of the viewer's names `authority` (`host[:port]`) is, if
    /// any; the port may be left out only when it is 80.
    fn own(&self, authority: &str) -> Option<usize> {
        let (host, port) = match authority.rsplit_once(':') {
            Some((h, p)) if !p.contains(']') => (h, p.parse::<u16>().ok()),
            _ => (authority, Some(80)),
        };
        if port != Some(self.port) {
            return None;
        }
        self.hosts.iter().position(|h| h.eq_ignore_ascii_case(host))
    }

    /// Checks the `Host` values of a request, and for data its `Origin`:
    /// `http://` and the same name and port as `Host` (the same origin).
    pub fn check<'a>(
        &self,
        mut hosts: impl Iterator<Item = &'a str>,
        origin: Option<&str>,
        data: bool,
    ) -> Result<(), Refusal> {
        let (Some(host), None) = (hosts.next(), hosts.next()) else {
            return Err(Refusal::BadHost);
        };
        let Some(name) = self.own(host) else {
            return Err(Refusal::ForeignHost);
        };
        match origin {
            Some(o) if data => match o.strip_prefix("http://") {
                Some(a) if self.own(a) == Some(name) => Ok(()),
                _ => Err(Refusal::ForeignOrigin),
            },
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v4(port: u16) -> Guard {
        Guard::bound(SocketAddr::from(([127, 0, 0, 1], port)))
    }

    #[test]
    fn only_the_loopback_names_with_the_port_pass() {
        let g = v4(8735);
        let host = |h: &str| g.check([h].into_iter(), None, true);
        for ok in ["127.0.0.1:8735", "localhost:8735", "LOCALHOST:8735"] {
            assert_eq!(host(ok), Ok(()), "{ok}");
        }
        for bad in [
            "evil.example:8735",
            "127.0.0.1",
            "127.0.0.1:8736",
            "127.0.0.1:08735x",
            "localhost.:8735",
            "[::1]:8735",
            "[::1]",
            "",
        ] {
            assert_eq!(host(bad), Err(Refusal::ForeignHost), "{bad}");
        }
        assert_eq!(g.check([].into_iter(), None, false), Err(Refusal::BadHost));
        let two = ["127.0.0.1:8735", "127.0.0.1:8735"];
        assert_eq!(g.check(two.into_iter(), None, false), Err(Refusal::BadHost));
        assert_eq!(v4(80).check(["localhost"].into_iter(), None, false), Ok(()));
        let v6 = Guard::bound(SocketAddr::from((std::net::Ipv6Addr::LOCALHOST, 8735)));
        for (host, ok) in [
            ("[::1]:8735", true),
            ("localhost:8735", true),
            ("127.0.0.1:8735", false),
        ] {
            let got = v6.check([host].into_iter(), None, false);
            assert_eq!(got.is_ok(), ok, "{host}: {got:?}");
        }
    }

    #[test]
    fn a_foreign_origin_is_refused_for_data_only() {
        let g = v4(8735);
        let h = || ["127.0.0.1:8735"].into_iter();
        assert_eq!(g.check(h(), Some("http://127.0.0.1:8735"), true), Ok(()));
        let local = || ["localhost:8735"].into_iter();
        assert_eq!(
            g.check(local(), Some("http://LocalHost:8735"), true),
            Ok(())
        );
        assert_eq!(
            g.check(local(), Some("http://127.0.0.1:8735"), true),
            Err(Refusal::ForeignOrigin)
        );
        for bad in [
            "http://localhost:8735",
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
