//! End-to-end: the Connect worker's REST API over https (issue #28 item
//! 2), with keystores made by the JDK's `keytool` as a Connect user makes
//! them, and `curl` verifying the worker's certificate as the guide's
//! commands would (`--cacert`). Clusters come from `scripts/clusters start`
//! (see tests/common).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::connect::*;
use common::*;
use serde_json::json;

/// This file's REST ports (see [`rest_port`]).
const RANGE: std::ops::Range<u16> = 18500..18600;

fn keytool(args: &[&str]) {
    let out = Command::new("keytool").args(args).output().expect("run the JDK's keytool");
    assert!(out.status.success(), "keytool {args:?}: {}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
}

/// A key pair for 127.0.0.1 in a new keystore of `store_type`, as the
/// Connect docs make one; its certificate exported as PEM beside it
/// (`<file>.pem`, for curl's --cacert or a truststore).
fn keypair(dir: &Path, file: &str, store_type: &str, store_pw: &str, key_pw: &str) -> (PathBuf, PathBuf) {
    let store = dir.join(file);
    let pem = dir.join(format!("{file}.pem"));
    let s = store.display().to_string();
    keytool(&[
        "-genkeypair",
        "-alias",
        "me",
        "-keyalg",
        "EC",
        "-groupname",
        "secp256r1",
        "-dname",
        "CN=127.0.0.1",
        "-ext",
        "SAN=ip:127.0.0.1,dns:localhost",
        "-validity",
        "2",
        "-storetype",
        store_type,
        "-keystore",
        &s,
        "-storepass",
        store_pw,
        "-keypass",
        key_pw,
        "-noprompt",
    ]);
    keytool(&["-exportcert", "-rfc", "-alias", "me", "-keystore", &s, "-storepass", store_pw, "-file", &pem.display().to_string()]);
    (store, pem)
}

/// A truststore of `store_type` holding the certificate in `pem`.
fn truststore(dir: &Path, file: &str, store_type: &str, pw: &str, pem: &Path) -> PathBuf {
    let store = dir.join(file);
    keytool(&[
        "-importcert",
        "-noprompt",
        "-alias",
        "trusted",
        "-file",
        &pem.display().to_string(),
        "-storetype",
        store_type,
        "-keystore",
        &store.display().to_string(),
        "-storepass",
        pw,
    ]);
    store
}

/// A worker file whose listeners and REST keys are `rest` (lines).
fn worker_file(dir: &Path, rest: &[String]) -> PathBuf {
    let converters = [format!("key.converter={BYTE_ARRAY_CONVERTER}"), format!("value.converter={BYTE_ARRAY_CONVERTER}")];
    distributed_worker_file(&dir.join("worker.properties"), &target(), &unique("connect-https"), &[&converters[..], rest].concat())
}

/// A worker file with one https listener, on `port`, serving the keystore
/// `store` opened with `password`; then the `more` lines.
fn https_worker_file(dir: &Path, port: u16, store: &Path, password: &str, more: &[&str]) -> PathBuf {
    let mut rest = vec![
        format!("listeners=https://127.0.0.1:{port}"),
        format!("listeners.https.ssl.keystore.location={}", store.display()),
        format!("listeners.https.ssl.keystore.password={password}"),
    ];
    rest.extend(more.iter().map(|l| l.to_string()));
    worker_file(dir, &rest)
}

/// `curl -s` with `tls` arguments: (http code, body, curl's exit code).
/// curl's code 0 with http code 0 never happens; a refused handshake is a
/// non-zero exit (35, 56, ...) and http code 0.
fn curl_with(tls: &[String], method: &str, url: &str, data: Option<&Path>) -> (u16, String, i32) {
    let mut c = Command::new("curl");
    c.args(["-s", "-S", "--max-time", "30", "-X", method, "-H", "Content-Type: application/json", "-w", "\n%{http_code}", url]);
    c.args(tls);
    if let Some(d) = data {
        c.args(["--data", &format!("@{}", d.display())]);
    }
    let out = c.output().expect("run curl");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let (body, code) = text.rsplit_once('\n').unwrap_or(("", &text));
    let code = code.trim().parse().unwrap_or(0);
    (code, format!("{body}{}", String::from_utf8_lossy(&out.stderr)), out.status.code().unwrap_or(-1))
}

fn connector_json(dir: &Path) -> PathBuf {
    let id = short_id();
    let config = mirror_connector("MirrorSourceConnector", (&format!("A{id}"), &format!("B{id}")), &target(), &unique("https"), json!({ "tasks.max": "1" }));
    json_file(&dir.join("connector.json"), &config)
}

/// The guide's two steps over https: PUT a connector config (201), then
/// its status until RUNNING; every call with curl verifying the worker.
fn put_and_run(tls: &[String], base: &str, dir: &Path, log: &dyn Fn() -> String) {
    let url = format!("{base}/connectors/mm2-https/config");
    let (code, body, _) = curl_with(tls, "PUT", &url, Some(&connector_json(dir)));
    assert_eq!(code, 201, "PUT over https: {body}\n{}", log());
    wait_until("status RUNNING over https", || {
        let (code, body, _) = curl_with(tls, "GET", &format!("{base}/connectors/mm2-https/status"), None);
        code == 200 && body.contains(r#""connector":{"state":"RUNNING""#)
    });
}

fn start(file: &Path) -> Mirror {
    Mirror::start(&[s("--connect.distributed"), path(file)])
}

/// Waits for the worker to answer `GET /` with `tls`; a worker that exits
/// meanwhile fails the test with its log.
fn wait_serving(worker: &mut Mirror, tls: &[String], base: &str) {
    wait_until("the worker's https REST API", || {
        assert!(worker.alive(), "the worker exited:\n{}", worker.output());
        curl_with(tls, "GET", &format!("{base}/"), None).0 == 200
    });
}

/// keytool's default store type, PKCS12, behind `listeners=https://`: curl
/// verifying the worker's certificate drives the guide's workflow; curl
/// not trusting it is refused, and so is plain http on the https port.
#[test]
#[ignore = "needs clusters"]
fn https_listener_with_a_pkcs12_keystore_serves_the_guides_workflow() {
    require_clusters!(source(), target());
    let dir = scratch_dir("connect-https");
    let (store, cert) = keypair(&dir, "worker.p12", "PKCS12", "storepw", "storepw");
    let port = rest_port(RANGE);
    let file = https_worker_file(&dir, port, &store, "storepw", &["listeners.https.ssl.keystore.type=PKCS12"]);
    let mut worker = start(&file);
    let base = format!("https://127.0.0.1:{port}");
    let tls = vec![s("--cacert"), path(&cert)];
    wait_serving(&mut worker, &tls, &base);
    put_and_run(&tls, &base, &dir, &|| worker.output());

    // Without the CA, curl refuses the worker's self-signed certificate:
    // the certificate checked is the keystore's.
    let (code, out, exit) = curl_with(&[], "GET", &format!("{base}/"), None);
    assert!(code == 0 && exit == 60, "curl without --cacert: exit {exit}, code {code}: {out}");
    // Plain http on the https port gets no HTTP answer.
    let (code, out, exit) = curl_with(&[], "GET", &format!("http://127.0.0.1:{port}/connectors"), None);
    assert!(code != 200 && exit != 0, "plain http on the https port: exit {exit}, code {code}: {out}");
    // And the worker still serves https afterwards.
    assert_eq!(curl_with(&tls, "GET", &format!("{base}/connectors"), None).0, 200, "{}", worker.output());
}

/// The https worker file of the client-certificate tests and what curl
/// needs against it.
struct Mtls {
    file: PathBuf,
    https_port: u16,
    http_port: u16,
    /// curl's arguments with the trusted client certificate.
    with_cert: Vec<String>,
    /// curl's arguments trusting the worker but with no client certificate.
    without_cert: Vec<String>,
    /// curl's arguments with a client certificate the worker does not trust.
    stranger: Vec<String>,
}

/// A JKS keystore whose key has its own password (ssl.key.password), a JKS
/// truststore holding the client's certificate, `ssl.client.auth=required`,
/// an http listener beside the https one, `rest.advertised.listener=https`.
fn mtls_setup(dir: &Path) -> Mtls {
    let (store, cert) = keypair(dir, "worker.jks", "JKS", "storepw", "keypass");
    let (client, client_cert) = keypair(dir, "client.p12", "PKCS12", "clientpw", "clientpw");
    let (stranger, _) = keypair(dir, "stranger.p12", "PKCS12", "strangerpw", "strangerpw");
    let trust = truststore(dir, "trust.jks", "JKS", "trustpw", &client_cert);
    let (https_port, http_port) = (rest_port(RANGE), rest_port(RANGE));
    let file = worker_file(
        dir,
        &[
            format!("listeners=http://127.0.0.1:{http_port},https://127.0.0.1:{https_port}"),
            "rest.advertised.listener=https".into(),
            format!("listeners.https.ssl.keystore.location={}", store.display()),
            "listeners.https.ssl.keystore.password=storepw".into(),
            "listeners.https.ssl.key.password=keypass".into(),
            "listeners.https.ssl.keystore.type=JKS".into(),
            format!("listeners.https.ssl.truststore.location={}", trust.display()),
            "listeners.https.ssl.truststore.password=trustpw".into(),
            "listeners.https.ssl.truststore.type=JKS".into(),
            "listeners.https.ssl.client.auth=required".into(),
        ],
    );
    let p12 = |f: &Path, pw: &str| vec![s("--cacert"), path(&cert), s("--cert-type"), s("P12"), s("--cert"), format!("{}:{pw}", f.display())];
    Mtls {
        file,
        https_port,
        http_port,
        with_cert: p12(&client, "clientpw"),
        without_cert: vec![s("--cacert"), path(&cert)],
        stranger: p12(&stranger, "strangerpw"),
    }
}

/// What a worker on [`mtls_setup`]'s file must do, Java's or ours: serve
/// the guide's PUT and status to the trusted client, named by its https
/// listener; refuse a client without a certificate or with an untrusted
/// one; serve its http listener plainly.
fn check_mtls(m: &Mtls, dir: &Path, alive: &mut dyn FnMut() -> bool, log: &dyn Fn() -> String) {
    let base = format!("https://127.0.0.1:{}", m.https_port);
    wait_until("the worker's https REST API", || {
        assert!(alive(), "the worker exited:\n{}", log());
        curl_with(&m.with_cert, "GET", &format!("{base}/"), None).0 == 200
    });
    put_and_run(&m.with_cert, &base, dir, log);
    let (_, body, _) = curl_with(&m.with_cert, "GET", &format!("{base}/connectors/mm2-https/status"), None);
    assert!(body.contains(&format!(r#""worker_id":"127.0.0.1:{}""#, m.https_port)), "named by its https listener: {body}");

    let (code, out, exit) = curl_with(&m.without_cert, "GET", &format!("{base}/connectors"), None);
    assert!(code == 0 && exit != 0, "curl without a client certificate was served: exit {exit}, code {code}: {out}");
    let (code, out, exit) = curl_with(&m.stranger, "GET", &format!("{base}/connectors"), None);
    assert!(code == 0 && exit != 0, "curl with an untrusted client certificate was served: exit {exit}, code {code}: {out}");

    let (code, body, _) = curl_with(&[], "GET", &format!("http://127.0.0.1:{}/connectors", m.http_port), None);
    assert_eq!((code, body.as_str()), (200, r#"["mm2-https"]"#), "{}", log());
}

#[test]
#[ignore = "needs clusters"]
fn https_with_a_jks_keystore_requires_a_trusted_client_certificate() {
    require_clusters!(source(), target());
    let dir = scratch_dir("connect-mtls");
    let m = mtls_setup(&dir);
    let mut worker = start(&m.file);
    let log = worker.log.clone();
    check_mtls(&m, &dir, &mut || worker.alive(), &|| std::fs::read_to_string(&log).unwrap_or_default());
}

/// The judge: Java's ConnectDistributed (scripts/java-connect) on the same
/// kind of worker file passes the same checks, so a file written for one
/// works on the other.
#[test]
#[ignore = "needs clusters"]
fn java_connect_takes_the_same_https_worker_file() {
    require_clusters!(source(), target());
    let dir = scratch_dir("connect-mtls-java");
    let m = mtls_setup(&dir);
    let log = dir.join("java-connect.log");
    let out = std::fs::File::create(&log).unwrap();
    /// Java's worker, killed when the test ends however it ends.
    struct Java(std::process::Child);
    impl Drop for Java {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let mut java = Java(
        Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/java-connect"))
            .arg(&m.file)
            .stdin(std::process::Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .expect("start scripts/java-connect"),
    );
    check_mtls(&m, &dir, &mut || java.0.try_wait().unwrap().is_none(), &|| std::fs::read_to_string(&log).unwrap_or_default());
}

/// A keystore that cannot be used stops the worker at start with the file,
/// the key and what to do, never a worker that fails each handshake.
#[test]
#[ignore = "needs clusters"]
fn a_keystore_that_cannot_be_opened_stops_the_worker_at_start() {
    require_clusters!(target());
    let dir = scratch_dir("connect-badstore");
    let (store, _) = keypair(&dir, "worker.jks", "JKS", "storepw", "storepw");
    let port = rest_port(RANGE);
    let file = https_worker_file(&dir, port, &store, "wrong", &[]);
    let (code, out) = run_to_exit(&["--connect.distributed", &path(&file)]);
    assert_ne!(code, 0, "{out}");
    assert!(
        out.contains("listeners.https.ssl.keystore.password") && out.contains(&store.display().to_string()) && out.contains("password"),
        "names the key, the file and the password: {out}"
    );
    assert!(std::net::TcpListener::bind(("127.0.0.1", port)).is_ok(), "nothing listens after a failed start");
}
