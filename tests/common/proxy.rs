//! A TLS- and token-checking reverse proxy in front of a Chroma server, as a team would
//! serve one: nginx (Debian's package, which `.ci/run` installs), with certificates made
//! at test time by rcgen. The proxy takes `Authorization: Bearer GOOD` or `X-Chroma-Token:
//! GOOD`; `EXPIRED` is answered as an expired token is (401, `error_description`);
//! anything else, or nothing, is 401. Without nginx the tests say so and pass, except
//! under `CI=true`, where they fail.
use super::chroma::free_port;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const GOOD: &str = "team-token-0f9c2d";
pub const EXPIRED: &str = "team-token-expired-77a1";

/// The certificates of one test: a CA, and server certificates signed by it.
pub struct Pki {
    pub dir: tempfile::TempDir,
    ca: rcgen::Certificate,
    ca_key: rcgen::KeyPair,
}

/// What a server certificate says.
pub enum Leaf {
    /// For `localhost` and 127.0.0.1, valid now.
    Good,
    /// For another host only.
    OtherHost,
    /// For this host, expired yesterday.
    Expired,
}

impl Pki {
    pub fn new() -> Self {
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "iret test CA");
        let ca_key = rcgen::KeyPair::generate().unwrap();
        let ca = params.self_signed(&ca_key).unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("ca.pem"), ca.pem()).unwrap();
        Self { dir, ca, ca_key }
    }

    /// The CA bundle a client trusts.
    pub fn ca(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }

    /// Writes a server certificate and key; their paths.
    pub fn leaf(&self, kind: Leaf, name: &str) -> (PathBuf, PathBuf) {
        let names = match kind {
            Leaf::OtherHost => vec!["db.elsewhere.example".to_string()],
            _ => vec!["localhost".to_string(), "127.0.0.1".to_string()],
        };
        let mut params = rcgen::CertificateParams::new(names).unwrap();
        let now = std::time::SystemTime::now();
        let day = Duration::from_secs(86_400);
        let (from, to) = match kind {
            Leaf::Expired => (now - 30 * day, now - day),
            _ => (now - day, now + 30 * day),
        };
        params.not_before = from.into();
        params.not_after = to.into();
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &self.ca, &self.ca_key).unwrap();
        let cert_path = self.dir.path().join(format!("{name}.pem"));
        let key_path = self.dir.path().join(format!("{name}.key"));
        std::fs::write(&cert_path, cert.pem()).unwrap();
        std::fs::write(&key_path, key.serialize_pem()).unwrap();
        (cert_path, key_path)
    }
}

/// A running nginx, stopped on drop.
pub struct Proxy {
    child: Child,
    pub port: u16,
    _dir: tempfile::TempDir,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Proxy {
    /// nginx on a free loopback port, speaking TLS with `cert`, checking the token, and
    /// passing what it lets through to the Chroma server on `upstream`; `None` without
    /// nginx here (a failure under `CI=true`).
    pub fn start(upstream: u16, cert: &Path, key: &Path) -> Option<Self> {
        let nginx = installed_nginx()?;
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let conf = dir.path().join("nginx.conf");
        std::fs::write(&conf, config(dir.path(), port, upstream, cert, key)).unwrap();
        let child = Command::new(nginx)
            .arg("-p")
            .arg(dir.path())
            .arg("-e")
            .arg(dir.path().join("error.log"))
            .arg("-c")
            .arg(&conf)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nginx starts");
        let proxy = Self {
            child,
            port,
            _dir: dir,
        };
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "nginx did not listen: {}",
                std::fs::read_to_string(proxy._dir.path().join("error.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(proxy)
    }

    /// `chroma+https://localhost:PORT/COLLECTION`.
    pub fn url(&self, collection: &str) -> String {
        format!("chroma+https://localhost:{}/{collection}", self.port)
    }
}

fn config(dir: &Path, port: u16, upstream: u16, cert: &Path, key: &Path) -> String {
    let d = dir.display();
    format!(
        r#"daemon off;
master_process off;
worker_processes 1;
pid {d}/nginx.pid;
events {{ worker_connections 256; }}
http {{
  access_log off;
  client_body_temp_path {d}/body;
  proxy_temp_path {d}/proxy;
  fastcgi_temp_path {d}/fastcgi;
  uwsgi_temp_path {d}/uwsgi;
  scgi_temp_path {d}/scgi;
  client_max_body_size 0;
  map "$http_authorization:$http_x_chroma_token" $iret_auth {{
    default wrong;
    ":" missing;
    "Bearer {GOOD}:" ok;
    ":{GOOD}" ok;
    "Bearer {EXPIRED}:" expired;
  }}
  server {{
    listen 127.0.0.1:{port} ssl;
    ssl_certificate {cert};
    ssl_certificate_key {key};
    location / {{
      if ($iret_auth = missing) {{
        add_header WWW-Authenticate 'Bearer realm="team"' always;
        return 401;
      }}
      if ($iret_auth = expired) {{
        add_header WWW-Authenticate 'Bearer realm="team", error="invalid_token", error_description="the token expired"' always;
        return 401;
      }}
      if ($iret_auth = wrong) {{
        add_header WWW-Authenticate 'Bearer realm="team", error="invalid_token"' always;
        return 401;
      }}
      proxy_pass http://127.0.0.1:{upstream};
      proxy_http_version 1.1;
      proxy_set_header Authorization "";
      proxy_set_header X-Chroma-Token "";
      proxy_read_timeout 300s;
    }}
  }}
}}
"#,
        cert = cert.display(),
        key = key.display(),
    )
}

/// nginx: `$IRET_TEST_NGINX`, else Debian's `/usr/sbin/nginx`, else on the PATH.
fn installed_nginx() -> Option<PathBuf> {
    let found = std::env::var_os("IRET_TEST_NGINX")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| Some(PathBuf::from("/usr/sbin/nginx")).filter(|p| p.is_file()))
        .or_else(|| {
            let path = std::env::var_os("PATH")?;
            std::env::split_paths(&path)
                .map(|d| d.join("nginx"))
                .find(|p| p.is_file())
        });
    if found.is_none() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "no nginx: .ci/run installs Debian's nginx for the TLS proxy"
        );
        eprintln!("no nginx here (apt-get install nginx): TLS proxy tests skipped");
    }
    found
}
