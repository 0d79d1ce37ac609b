//! `GET /health`: whether the mirror is starting, running, or failed or
//! stopping, for container probes, load balancers and watchdogs, answered
//! as Kafka Connect's `GET /health` answers (KIP-1017, Kafka 3.9:
//! `RootResource.healthCheck`, `WorkerStatus`): the same status codes, the
//! same JSON shape `{"status","message"}` in that order, and Connect's own
//! first sentence of each message, with what this process knows after it
//! (as Connect appends its stage summary). A script written against
//! Connect's endpoint reads ours unchanged.
//!
//! | state | code | status | Connect's first sentence |
//! |---|---|---|---|
//! | starting | 503 | `starting` | Worker is still starting up. |
//! | running | 200 | `healthy` | Worker has completed startup and is ready to handle requests. |
//! | failed or stopping | 500 | `unhealthy` | Worker was unable to handle this request and may be unable to handle other requests. |
//!
//! The engine sets the phase ([`Health::stage`] as it goes through its
//! start-up, [`Health::running`] once every flow's streams, producer
//! workers and side tasks are spawned; [`Health::failed`] for an error
//! before that); failures and the stop come from the run's [`Shutdown`],
//! read at each request, so every `Shutdown::fail` anywhere in the engine
//! shows here without the engine telling the health too.
//!
//! Stopping is unhealthy (500), though nothing failed. Connect never
//! answers healthy once its stop begins: `Connect.stop` closes the REST
//! server before it stops the herder, so a probe is refused, and a health
//! check still pending is failed with "Worker is shutting down", a 500.
//! Our endpoint stays up through the drain (the scraper still reads the
//! last counters), so it says 500 there too: a load balancer or readiness
//! probe must not count a draining mirror as one that serves, and a
//! liveness probe that restarts it only ends a stop already under way.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::kafka::secrets::scrubbed;
use crate::ops::shutdown::{ExitStatus, Shutdown};

/// Connect's `WorkerStatus.healthy()` message, whole.
pub const HEALTHY: &str = "Worker has completed startup and is ready to handle requests.";
/// The first sentence of Connect's `WorkerStatus.starting(..)`.
pub const STARTING: &str = "Worker is still starting up.";
/// The first sentence of Connect's `WorkerStatus.unhealthy(..)`.
pub const UNHEALTHY: &str = "Worker was unable to handle this request and may be unable to handle other requests.";

/// The mirror's health, set by the engine (or the Connect worker) and
/// read by the endpoints.
#[derive(Debug, Default)]
pub struct Health {
    running: AtomicBool,
    /// What start-up is doing and since when (ms since the epoch).
    stage: Mutex<Option<(String, i64)>>,
    /// A start-up error: the run ended before its Shutdown knew of it.
    failed: Mutex<Option<String>>,
    /// The run's stop signal and exit status.
    shutdown: OnceLock<Arc<Shutdown>>,
}

/// One answer: the HTTP status and Connect's body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub code: u16,
    /// `healthy`, `starting` or `unhealthy`.
    pub status: &'static str,
    pub message: String,
}

impl Report {
    fn healthy() -> Report {
        Report { code: 200, status: "healthy", message: HEALTHY.into() }
    }

    fn starting(detail: &str) -> Report {
        Report { code: 503, status: "starting", message: format!("{STARTING} {detail}") }
    }

    fn unhealthy(detail: &str) -> Report {
        Report { code: 500, status: "unhealthy", message: format!("{UNHEALTHY} {detail}") }
    }

    /// The HTTP status line's code and reason.
    pub fn status_line(&self) -> &'static str {
        match self.code {
            200 => "200 OK",
            503 => "503 Service Unavailable",
            _ => "500 Internal Server Error",
        }
    }

    /// `{"status":..,"message":..}`, in Connect's field order.
    pub fn json(&self) -> String {
        let text = |s: &str| serde_json::Value::String(s.to_string()).to_string();
        format!("{{\"status\":{},\"message\":{}}}", text(self.status), text(&self.message))
    }
}

impl Health {
    /// Ties the health to the run's stop signal: a failure or a stop shows
    /// from then on. Once per run; a second call is ignored.
    pub fn attach(&self, shutdown: Arc<Shutdown>) {
        let _ = self.shutdown.set(shutdown);
    }

    /// Start-up is now doing `what` (a phrase after "currently").
    pub fn stage(&self, what: impl Into<String>) {
        // Not metrics::now_ms: metrics holds the health, so it may not be imported here.
        let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64);
        *self.stage.lock().unwrap_or_else(|e| e.into_inner()) = Some((what.into(), now));
    }

    /// Every flow is running.
    pub fn running(&self) {
        self.running.store(true, Ordering::Release);
    }

    /// The run ended with an error of its own before it ran (a start-up
    /// error that never went through the Shutdown).
    pub fn failed(&self, why: impl Into<String>) {
        let mut f = self.failed.lock().unwrap_or_else(|e| e.into_inner());
        f.get_or_insert_with(|| why.into());
    }

    /// What `GET /health` answers now. Values fetched by config
    /// providers never show, as in the log.
    pub fn report(&self) -> Report {
        let mut r = self.report_raw();
        r.message = scrubbed(&r.message);
        r
    }

    fn report_raw(&self) -> Report {
        if let Some(why) = self.failed.lock().unwrap_or_else(|e| e.into_inner()).as_deref() {
            return Report::unhealthy(&format!("The mirror failed to start: {why}"));
        }
        if let Some(s) = self.shutdown.get() {
            match s.status() {
                ExitStatus::Ok | ExitStatus::DrainTimeout if s.stopping() => {
                    return Report::unhealthy("The mirror is shutting down: it drains what it read and commits, then exits.");
                }
                ExitStatus::Ok => {}
                status => {
                    let why = s.reason().unwrap_or_else(|| "no reason was given".into());
                    return Report::unhealthy(&format!("The mirror failed ({status}) and is stopping: {why}"));
                }
            }
        }
        if self.running.load(Ordering::Acquire) {
            return Report::healthy();
        }
        match &*self.stage.lock().unwrap_or_else(|e| e.into_inner()) {
            // Connect's own stage summary, "The worker is currently ..., which began at ...".
            Some((what, since)) => Report::starting(&format!("The mirror is currently {what}, which began at {}.", utc(*since))),
            None => Report::starting("The mirror has not begun its start-up yet."),
        }
    }
}

/// Epoch milliseconds as an ISO 8601 UTC time with milliseconds, as
/// Connect's stage summary prints an `Instant` (days to civil date after
/// Howard Hinnant's algorithm; no calendar crate needed for one line).
/// `failover` prints its checkpoints' times with it too.
pub fn utc(ms: i64) -> String {
    let (days, rem) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let (h, m, s, milli) = (rem / 3_600_000, rem / 60_000 % 60, rem / 1000 % 60, rem % 1000);
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{milli:03}Z")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn body(r: &Report) -> serde_json::Value {
        serde_json::from_str(&r.json()).unwrap()
    }

    #[test]
    fn starting_is_503_with_connects_sentence_and_the_stage() {
        let h = Health::default();
        let r = h.report();
        assert_eq!((r.code, r.status_line(), r.status), (503, "503 Service Unavailable", "starting"));
        assert_eq!(r.message, "Worker is still starting up. The mirror has not begun its start-up yet.");
        h.attach(Shutdown::new(Duration::from_secs(1)));
        h.stage("waiting for the target cluster (localhost:1) to answer");
        let r = h.report();
        assert_eq!(r.code, 503);
        assert!(
            r.message
                .starts_with("Worker is still starting up. The mirror is currently waiting for the target cluster (localhost:1) to answer, which began at 20"),
            "{}",
            r.message
        );
        assert!(r.message.ends_with("Z."), "{}", r.message);
        let b = body(&r);
        assert_eq!(b["status"], "starting");
        assert!(r.json().starts_with("{\"status\":\"starting\",\"message\":\"Worker is still starting up. "), "Connect's field order: {}", r.json());
    }

    #[test]
    fn running_is_200_with_connects_healthy_body_exactly() {
        let h = Health::default();
        h.attach(Shutdown::new(Duration::from_secs(1)));
        h.stage("starting flow A->B");
        h.running();
        let r = h.report();
        assert_eq!((r.code, r.status_line()), (200, "200 OK"));
        assert_eq!(r.json(), r#"{"status":"healthy","message":"Worker has completed startup and is ready to handle requests."}"#);
    }

    #[test]
    fn a_failed_run_is_500_with_the_reason_whether_or_not_it_had_started() {
        for started in [false, true] {
            let h = Health::default();
            let s = Shutdown::new(Duration::from_secs(1));
            h.attach(s.clone());
            if started {
                h.running();
            }
            s.fail(ExitStatus::Failure, "Error when sending message to topic t (10 bytes) from source t-0 at offset 4: \"Message timed out\"".into());
            let r = h.report();
            assert_eq!((r.code, r.status_line(), r.status), (500, "500 Internal Server Error", "unhealthy"));
            assert_eq!(
                r.message,
                "Worker was unable to handle this request and may be unable to handle other requests. The mirror failed (runtime failure) and is stopping: \
                 Error when sending message to topic t (10 bytes) from source t-0 at offset 4: \"Message timed out\""
            );
            // Quotes in the reason stay JSON.
            assert_eq!(body(&r)["message"], r.message);
            // The drain timeout that may follow keeps the failure's reason.
            s.drain_timed_out();
            assert!(h.report().message.contains("Message timed out"));
        }
    }

    #[test]
    fn a_start_up_error_is_500_even_before_a_shutdown_is_attached() {
        let h = Health::default();
        h.failed("cannot listen on 127.0.0.1:9100 (--metrics.port): Address in use");
        h.failed("a second error does not replace the first");
        let r = h.report();
        assert_eq!((r.code, r.status), (500, "unhealthy"));
        assert!(r.message.ends_with("The mirror failed to start: cannot listen on 127.0.0.1:9100 (--metrics.port): Address in use"), "{}", r.message);
    }

    #[test]
    fn stopping_is_500_from_the_signal_to_the_exit_even_when_running() {
        let h = Health::default();
        let s = Shutdown::new(Duration::from_millis(1));
        h.attach(s.clone());
        h.running();
        s.request_stop();
        let r = h.report();
        assert_eq!((r.code, r.status), (500, "unhealthy"));
        assert!(r.message.ends_with("The mirror is shutting down: it drains what it read and commits, then exits."), "{}", r.message);
        // Past the drain deadline with records undelivered: still stopping, not failed.
        s.drain_timed_out();
        assert_eq!(s.status(), ExitStatus::DrainTimeout);
        assert!(h.report().message.contains("shutting down"), "{}", h.report().message);
        // Stopping while still starting: stopping wins.
        let h = Health::default();
        let s = Shutdown::new(Duration::from_secs(1));
        h.attach(s.clone());
        s.request_stop();
        assert_eq!(h.report().code, 500);
    }

    /// `GET path` on the metrics endpoint: status line, content type, body.
    fn get(port: u16, path: &str) -> (String, String, String) {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        write!(s, "GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        let mut text = String::new();
        s.read_to_string(&mut text).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        let ctype = head.lines().find_map(|l| l.strip_prefix("Content-Type: ")).unwrap_or("").to_string();
        (head.lines().next().unwrap().to_string(), ctype, body.to_string())
    }

    #[test]
    fn the_metrics_endpoint_answers_get_health_in_each_state_in_json() {
        let m = Arc::new(crate::ops::metrics::Metrics::default());
        let shutdown = Shutdown::new(Duration::from_secs(1));
        m.health.attach(shutdown.clone());
        m.health.stage("starting flow A->B");
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        crate::ops::endpoint::serve("127.0.0.1", port, m.clone()).unwrap();

        let (status, ctype, body) = get(port, "/health");
        assert_eq!((status.as_str(), ctype.as_str()), ("HTTP/1.1 503 Service Unavailable", "application/json"));
        assert!(
            body.starts_with(r#"{"status":"starting","message":"Worker is still starting up. The mirror is currently starting flow A->B, which began at "#),
            "{body}"
        );

        m.health.running();
        // A query string is ignored, as Connect's resource ignores it.
        let (status, ctype, body) = get(port, "/health?probe=1");
        assert_eq!((status.as_str(), ctype.as_str()), ("HTTP/1.1 200 OK", "application/json"));
        assert_eq!(body, r#"{"status":"healthy","message":"Worker has completed startup and is ready to handle requests."}"#);
        let (status, ctype, _) = get(port, "/metrics");
        assert_eq!((status.as_str(), ctype.as_str()), ("HTTP/1.1 200 OK", "text/plain; version=0.0.4"), "the metrics page stays text");

        shutdown.fail(ExitStatus::Failure, "the target refused a record".into());
        let (status, ctype, body) = get(port, "/health");
        assert_eq!((status.as_str(), ctype.as_str()), ("HTTP/1.1 500 Internal Server Error", "application/json"));
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["status"], "unhealthy");
        assert!(v["message"].as_str().unwrap().ends_with("The mirror failed (runtime failure) and is stopping: the target refused a record"), "{body}");

        assert!(get(port, "/healthz").0.starts_with("HTTP/1.1 404"), "no other path");
    }

    #[test]
    fn utc_prints_iso_8601_with_milliseconds() {
        assert_eq!(utc(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(utc(1_725_530_400_123), "2024-09-05T10:00:00.123Z");
        assert_eq!(utc(951_782_400_123), "2000-02-29T00:00:00.123Z");
        assert_eq!(utc(1_735_689_599_999), "2024-12-31T23:59:59.999Z");
    }
}
