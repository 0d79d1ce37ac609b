//! Finding the brokers of a ZooKeeper-era consumer file in ZooKeeper.
//!
//! A 0.8 consumer file names only `zookeeper.connect`; the brokers register
//! themselves under `/brokers/ids/<id>` there. This is the minimal ZooKeeper
//! client that reads them: the jute wire protocol over one TCP connection
//! (ConnectRequest, getChildren, getData, close), read-only, no watches, no
//! session reuse. An async ZooKeeper crate would bring tokio and far more
//! than these four requests.

use std::fmt;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

/// Why the brokers could not be read; the message names the ZooKeeper
/// address and what failed.
#[derive(Debug, Clone, PartialEq)]
pub enum ZkError {
    /// `zookeeper.connect` cannot be read as `host:port,...[/chroot]`.
    ConnectString(String),
    /// No server could be reached: resolving, connecting, reading or writing failed.
    Unreachable(String),
    /// A server answered, but not as ZooKeeper does, or with an error code.
    Protocol(String),
    /// ZooKeeper answered, but registers no broker this mirror can use.
    NoBrokers(String),
}

impl fmt::Display for ZkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ZkError::ConnectString(m) | ZkError::Unreachable(m) | ZkError::Protocol(m) | ZkError::NoBrokers(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for ZkError {}

/// A parsed `zookeeper.connect`: `host:port,host:port[/chroot]`.
#[derive(Debug, Clone, PartialEq)]
pub struct ConnectString {
    pub hosts: Vec<String>,
    /// Empty, or a path like `/kafka` every request path is prefixed with.
    pub chroot: String,
}

impl ConnectString {
    pub fn parse(s: &str) -> Result<ConnectString, ZkError> {
        let s = s.trim();
        let (hosts, chroot) = match s.find('/') {
            Some(i) => (&s[..i], s[i..].trim_end_matches('/')),
            None => (s, ""),
        };
        let hosts: Vec<String> = hosts
            .split(',')
            .map(str::trim)
            .filter(|h| !h.is_empty())
            // ZooKeeper's own default port, as its client assumes.
            .map(|h| if h.rsplit_once(':').is_some_and(|(_, p)| p.parse::<u16>().is_ok()) { h.to_string() } else { format!("{h}:2181") })
            .collect();
        if hosts.is_empty() {
            return Err(ZkError::ConnectString(format!("zookeeper.connect '{s}' names no host")));
        }
        Ok(ConnectString { hosts, chroot: chroot.to_string() })
    }

    fn path(&self, p: &str) -> String {
        if self.chroot.is_empty() {
            p.to_string()
        } else if p == "/" {
            self.chroot.clone()
        } else {
            format!("{}{p}", self.chroot)
        }
    }
}

const OP_GET_DATA: i32 = 4;
const OP_GET_CHILDREN: i32 = 8;
const OP_CLOSE: i32 = -11;
const ERR_NO_NODE: i32 = -101;

/// Appends jute primitives to a request body.
#[derive(Default)]
struct Out(Vec<u8>);

impl Out {
    fn int(&mut self, v: i32) -> &mut Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn long(&mut self, v: i64) -> &mut Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn bool(&mut self, v: bool) -> &mut Self {
        self.0.push(u8::from(v));
        self
    }
    fn buffer(&mut self, v: &[u8]) -> &mut Self {
        self.int(v.len() as i32);
        self.0.extend_from_slice(v);
        self
    }
    /// A length-prefixed frame, as every ZooKeeper packet is sent.
    fn frame(&self) -> Vec<u8> {
        let mut f = (self.0.len() as i32).to_be_bytes().to_vec();
        f.extend_from_slice(&self.0);
        f
    }
}

/// Reads jute primitives from a response body.
struct In<'a>(&'a [u8]);

impl In<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], ZkError> {
        if self.0.len() < n {
            return Err(ZkError::Protocol("truncated ZooKeeper response".into()));
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }
    fn int(&mut self) -> Result<i32, ZkError> {
        Ok(i32::from_be_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }
    fn long(&mut self) -> Result<i64, ZkError> {
        Ok(i64::from_be_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }
    fn buffer(&mut self) -> Result<Vec<u8>, ZkError> {
        let n = self.int()?;
        if n < 0 {
            return Ok(Vec::new());
        }
        Ok(self.take(n as usize)?.to_vec())
    }
    fn string(&mut self) -> Result<String, ZkError> {
        String::from_utf8(self.buffer()?).map_err(|_| ZkError::Protocol("ZooKeeper sent a name that is not UTF-8".into()))
    }
}

/// One ZooKeeper session on one server.
pub struct Session {
    stream: TcpStream,
    xid: i32,
    server: String,
    chroot: ConnectString,
}

fn connect_request(timeout_ms: i32) -> Vec<u8> {
    let mut o = Out::default();
    // protocolVersion, lastZxidSeen, timeOut, sessionId, passwd, readOnly
    o.int(0).long(0).int(timeout_ms).long(0).buffer(&[0; 16]).bool(false);
    o.frame()
}

fn path_request(xid: i32, op: i32, path: &str) -> Vec<u8> {
    let mut o = Out::default();
    o.int(xid).int(op).buffer(path.as_bytes()).bool(false);
    o.frame()
}

impl Session {
    /// Connects to the first server of `connect` that answers.
    pub fn open(connect: &ConnectString, timeout: Duration) -> Result<Session, ZkError> {
        let mut errors = Vec::new();
        for host in &connect.hosts {
            match Self::open_one(host, connect, timeout) {
                Ok(s) => return Ok(s),
                Err(e) => errors.push(format!("{host}: {e}")),
            }
        }
        Err(ZkError::Unreachable(format!("no ZooKeeper server answered ({})", errors.join("; "))))
    }

    fn open_one(host: &str, connect: &ConnectString, timeout: Duration) -> Result<Session, ZkError> {
        let addrs: Vec<_> = host.to_socket_addrs().map_err(|e| ZkError::Unreachable(format!("cannot resolve: {e}")))?.collect();
        let mut last = ZkError::Unreachable("no address".into());
        for addr in addrs {
            let stream = match TcpStream::connect_timeout(&addr, timeout) {
                Ok(s) => s,
                Err(e) => {
                    last = ZkError::Unreachable(e.to_string());
                    continue;
                }
            };
            stream.set_read_timeout(Some(timeout)).ok();
            stream.set_write_timeout(Some(timeout)).ok();
            let mut s = Session { stream, xid: 0, server: host.to_string(), chroot: connect.clone() };
            s.send(&connect_request(timeout.as_millis().min(i32::MAX as u128) as i32))?;
            let reply = s.recv()?;
            let mut r = In(&reply);
            let _version = r.int()?;
            let negotiated = r.int()?;
            let session_id = r.long()?;
            if negotiated <= 0 || session_id == 0 {
                return Err(ZkError::Protocol("the server refused the session".into()));
            }
            return Ok(s);
        }
        Err(last)
    }

    fn send(&mut self, frame: &[u8]) -> Result<(), ZkError> {
        self.stream.write_all(frame).map_err(|e| ZkError::Unreachable(format!("write to {}: {e}", self.server)))
    }

    fn recv(&mut self) -> Result<Vec<u8>, ZkError> {
        let mut len = [0u8; 4];
        self.stream.read_exact(&mut len).map_err(|e| ZkError::Unreachable(format!("read from {}: {e}", self.server)))?;
        let len = i32::from_be_bytes(len);
        if !(0..=16 << 20).contains(&len) {
            return Err(ZkError::Protocol(format!("{} sent a frame of {len} bytes; is it a ZooKeeper server?", self.server)));
        }
        let mut buf = vec![0u8; len as usize];
        self.stream.read_exact(&mut buf).map_err(|e| ZkError::Unreachable(format!("read from {}: {e}", self.server)))?;
        Ok(buf)
    }

    /// Sends a path request; returns the response body, or None for "no node".
    fn call(&mut self, op: i32, path: &str) -> Result<Option<Vec<u8>>, ZkError> {
        self.xid += 1;
        let full = self.chroot.path(path);
        self.send(&path_request(self.xid, op, &full))?;
        loop {
            let reply = self.recv()?;
            let mut r = In(&reply);
            let xid = r.int()?;
            let _zxid = r.long()?;
            let err = r.int()?;
            // -1 are watch events, -2 pings; neither is asked for, skip anyway.
            if xid != self.xid {
                continue;
            }
            return match err {
                0 => Ok(Some(r.0.to_vec())),
                ERR_NO_NODE => Ok(None),
                e => Err(ZkError::Protocol(format!("{} answered error {e} for {full}", self.server))),
            };
        }
    }

    /// The children of `path`, or None when it does not exist.
    pub fn children(&mut self, path: &str) -> Result<Option<Vec<String>>, ZkError> {
        let Some(body) = self.call(OP_GET_CHILDREN, path)? else { return Ok(None) };
        let mut r = In(&body);
        let n = r.int()?;
        (0..n.max(0)).map(|_| r.string()).collect::<Result<Vec<_>, _>>().map(Some)
    }

    /// The data of `path`, or None when it does not exist.
    pub fn data(&mut self, path: &str) -> Result<Option<Vec<u8>>, ZkError> {
        let Some(body) = self.call(OP_GET_DATA, path)? else { return Ok(None) };
        In(&body).buffer().map(Some)
    }

    /// Ends the session at once instead of letting it time out on the server.
    pub fn close(mut self) {
        self.xid += 1;
        let mut o = Out::default();
        o.int(self.xid).int(OP_CLOSE);
        if self.send(&o.frame()).is_ok() {
            let _ = self.recv();
        }
    }
}

/// One registered broker's address for the wanted security protocol, from
/// its `/brokers/ids/<id>` JSON: `endpoints` (0.9+, `LISTENER://host:port`
/// with `listener_security_protocol_map`) or `host`/`port` (0.8, plaintext).
pub fn broker_address(json: &[u8], protocol: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_slice(json).ok()?;
    let map = v.get("listener_security_protocol_map").and_then(|m| m.as_object());
    if let Some(endpoints) = v.get("endpoints").and_then(|e| e.as_array()) {
        for ep in endpoints.iter().filter_map(|e| e.as_str()) {
            let Some((listener, addr)) = ep.split_once("://") else { continue };
            let proto = map.and_then(|m| m.get(listener)).and_then(|p| p.as_str()).unwrap_or(listener);
            if proto.eq_ignore_ascii_case(protocol) {
                return Some(addr.to_string());
            }
        }
    }
    let host = v.get("host").and_then(|h| h.as_str()).filter(|h| !h.is_empty())?;
    let port = v.get("port").and_then(|p| p.as_i64()).filter(|p| *p > 0)?;
    protocol.eq_ignore_ascii_case("PLAINTEXT").then(|| format!("{host}:{port}"))
}

/// The brokers registered in the ZooKeeper of `connect`, as a bootstrap list.
pub fn bootstrap_servers(connect: &str, protocol: &str, timeout: Duration) -> Result<String, ZkError> {
    let cs = ConnectString::parse(connect)?;
    let mut s = Session::open(&cs, timeout)?;
    let result = (|| {
        let ids = s.children("/brokers/ids")?.ok_or_else(|| {
            ZkError::NoBrokers(format!("{}/brokers/ids does not exist: no Kafka cluster is registered there (is the chroot right?)", cs.chroot))
        })?;
        let mut out = Vec::new();
        for id in &ids {
            if let Some(data) = s.data(&format!("/brokers/ids/{id}"))? {
                if let Some(addr) = broker_address(&data, protocol) {
                    out.push(addr);
                }
            }
        }
        if out.is_empty() {
            return Err(ZkError::NoBrokers(format!("{}/brokers/ids lists {} broker(s) but none with a {protocol} endpoint", cs.chroot, ids.len())));
        }
        Ok(out.join(","))
    })();
    s.close();
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn connect_string_hosts_and_chroot() {
        let c = ConnectString::parse("zk1:2181, zk2:2182,zk3/kafka/prod/").unwrap();
        assert_eq!(c.hosts, vec!["zk1:2181", "zk2:2182", "zk3:2181"]);
        assert_eq!(c.chroot, "/kafka/prod");
        assert_eq!(c.path("/brokers/ids"), "/kafka/prod/brokers/ids");
        let c = ConnectString::parse("zk1:2181").unwrap();
        assert_eq!((c.chroot.as_str(), c.path("/brokers/ids").as_str()), ("", "/brokers/ids"));
        assert!(ConnectString::parse(" /kafka").is_err());
    }

    #[test]
    fn requests_are_jute_frames() {
        let c = connect_request(6000);
        // length 45 = 4 + 8 + 4 + 8 + (4 + 16) + 1
        assert_eq!(&c[..4], &[0, 0, 0, 45]);
        assert_eq!(&c[4..8], &[0, 0, 0, 0]);
        assert_eq!(&c[16..20], &6000i32.to_be_bytes());
        assert_eq!(&c[28..32], &[0, 0, 0, 16]);
        assert_eq!(c.len(), 49);
        let r = path_request(7, OP_GET_CHILDREN, "/a");
        assert_eq!(r, vec![0, 0, 0, 15, 0, 0, 0, 7, 0, 0, 0, 8, 0, 0, 0, 2, b'/', b'a', 0]);
    }

    #[test]
    fn broker_json_of_every_era() {
        let v3 = br#"{"listener_security_protocol_map":{"INTERNAL":"PLAINTEXT","EXT":"SSL"},"endpoints":["EXT://pub:9093","INTERNAL://10.0.0.1:9092"],"jmx_port":-1,"host":"10.0.0.1","port":9092,"version":5}"#;
        assert_eq!(broker_address(v3, "PLAINTEXT").as_deref(), Some("10.0.0.1:9092"));
        assert_eq!(broker_address(v3, "SSL").as_deref(), Some("pub:9093"));
        assert_eq!(broker_address(v3, "SASL_SSL"), None);
        let v08 = br#"{"jmx_port":-1,"timestamp":"1","host":"old","version":1,"port":9092}"#;
        assert_eq!(broker_address(v08, "PLAINTEXT").as_deref(), Some("old:9092"));
        let v09 = br#"{"endpoints":["PLAINTEXT://b:9092"],"host":"b","port":9092,"version":2}"#;
        assert_eq!(broker_address(v09, "plaintext").as_deref(), Some("b:9092"));
        assert_eq!(broker_address(b"not json", "PLAINTEXT"), None);
    }

    /// A fake ZooKeeper that answers from canned nodes, checking each request.
    fn fake_zk(nodes: Vec<(&'static str, Vec<&'static str>, &'static [u8])>) -> (String, std::thread::JoinHandle<Vec<String>>) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap().to_string();
        let h = std::thread::spawn(move || {
            let (mut c, _) = l.accept().unwrap();
            let mut seen = Vec::new();
            let read_frame = |c: &mut TcpStream| -> Option<Vec<u8>> {
                let mut len = [0u8; 4];
                c.read_exact(&mut len).ok()?;
                let mut b = vec![0u8; i32::from_be_bytes(len) as usize];
                c.read_exact(&mut b).ok()?;
                Some(b)
            };
            let req = read_frame(&mut c).unwrap();
            assert_eq!(req.len(), 45);
            let mut o = Out::default();
            o.int(0).int(6000).long(0x1234).buffer(&[0; 16]).bool(false);
            c.write_all(&o.frame()).unwrap();
            while let Some(req) = read_frame(&mut c) {
                let mut r = In(&req);
                let (xid, op) = (r.int().unwrap(), r.int().unwrap());
                let mut o = Out::default();
                if op == OP_CLOSE {
                    seen.push("close".into());
                    o.int(xid).long(1).int(0);
                    c.write_all(&o.frame()).unwrap();
                    break;
                }
                let path = r.string().unwrap();
                seen.push(format!("{op} {path}"));
                // A stray watch event first: the client must skip it.
                let mut ev = Out::default();
                ev.int(-1).long(1).int(0);
                c.write_all(&ev.frame()).unwrap();
                match nodes.iter().find(|(p, _, _)| *p == path) {
                    None => {
                        o.int(xid).long(1).int(ERR_NO_NODE);
                    }
                    Some((_, kids, data)) => {
                        o.int(xid).long(1).int(0);
                        if op == OP_GET_CHILDREN {
                            o.int(kids.len() as i32);
                            for k in kids {
                                o.buffer(k.as_bytes());
                            }
                        } else {
                            o.buffer(data);
                        }
                    }
                }
                c.write_all(&o.frame()).unwrap();
            }
            seen
        });
        (addr, h)
    }

    #[test]
    fn reads_brokers_under_the_chroot_and_closes() {
        let (addr, h) = fake_zk(vec![
            ("/kafka/brokers/ids", vec!["1", "2"], b""),
            ("/kafka/brokers/ids/1", vec![], br#"{"endpoints":["PLAINTEXT://a:9092"],"host":"a","port":9092}"#),
            ("/kafka/brokers/ids/2", vec![], br#"{"host":"b","port":9093,"version":1}"#),
        ]);
        // The first host is dead: the next one is tried.
        let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().to_string();
        let got = bootstrap_servers(&format!("{dead},{addr}/kafka"), "PLAINTEXT", Duration::from_secs(5)).unwrap();
        assert_eq!(got, "a:9092,b:9093");
        let seen = h.join().unwrap();
        assert_eq!(seen, vec!["8 /kafka/brokers/ids", "4 /kafka/brokers/ids/1", "4 /kafka/brokers/ids/2", "close"]);
    }

    #[test]
    fn missing_registry_and_dead_servers_are_explained() {
        let (addr, h) = fake_zk(vec![]);
        let e = bootstrap_servers(&format!("{addr}/wrong"), "PLAINTEXT", Duration::from_secs(5)).unwrap_err();
        assert!(e.to_string().contains("/wrong/brokers/ids does not exist"), "{e}");
        h.join().unwrap();
        let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().to_string();
        let e = bootstrap_servers(&dead, "PLAINTEXT", Duration::from_secs(2)).unwrap_err();
        assert!(e.to_string().contains("no ZooKeeper server answered") && e.to_string().contains(&dead), "{e}");
    }
}
