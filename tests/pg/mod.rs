//! A private PostgreSQL server for the tests that need one
//! (`tests/postgres.rs`): a cluster made with `initdb` in a temporary
//! folder, started with `pg_ctl` on a free local port, and stopped and
//! removed when the `Server` is dropped. As root, the cluster is made and
//! run as the `postgres` user (PostgreSQL refuses to run as root).
//!
//! The binaries are found on `PATH` or under `/usr/lib/postgresql/*/bin`
//! (Debian's `postgresql` package, which `.ci/run` installs when they are
//! missing). The tests that start one are `#[ignore]`d: a plain `cargo
//! test` needs no server.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The superuser's name and password (scram-sha-256 over TCP).
pub const USER: &str = "hql";
pub const PASSWORD: &str = "pg-secret-7";

pub struct Server {
    dir: PathBuf,
    bin: PathBuf,
    pub port: u16,
    /// Run the server's commands as this user (`runuser`), when root.
    as_user: Option<&'static str>,
    /// Serve TLS only, with a certificate `ca.pem` signed.
    tls: bool,
}

/// The folder of `initdb` and `pg_ctl`.
fn bin_dir() -> PathBuf {
    let on_path = Command::new("sh")
        .args(["-c", "command -v initdb"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    if let Some(initdb) = on_path {
        let path = std::fs::canonicalize(&initdb).unwrap_or_else(|_| PathBuf::from(&initdb));
        return path.parent().unwrap().to_path_buf();
    }
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.path().join("bin"))
                .collect()
        })
        .unwrap_or_default();
    versions.sort();
    versions
        .pop()
        .filter(|b| b.join("initdb").exists())
        .expect("PostgreSQL's initdb is not installed (apt-get install postgresql)")
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Server {
    /// A new cluster, started.
    pub fn start(name: &str) -> Server {
        Server::started(name, false)
    }

    /// A new cluster that takes TLS connections only, its certificate
    /// (for the name `db.invalid` alone) signed by the CA in `ca.pem`.
    pub fn start_tls(name: &str) -> Server {
        Server::started(name, true)
    }

    fn started(name: &str, tls: bool) -> Server {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // Short: the socket's path must fit in 107 bytes.
        let dir = std::env::temp_dir().join(format!("hql-pg-{}-{n}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let as_user = is_root().then_some("postgres");
        let server = Server {
            bin: bin_dir(),
            port: free_port(),
            dir,
            as_user,
            tls,
        };
        std::fs::write(server.dir.join("pw"), PASSWORD).unwrap();
        if tls {
            server.certificates();
        }
        if let Some(user) = as_user {
            let owned = Command::new("chown")
                .args(["-R", user])
                .arg(&server.dir)
                .status()
                .unwrap();
            assert!(owned.success());
        }
        let data = server.dir.join("data");
        server.must(
            "initdb",
            &[
                "-D",
                data.to_str().unwrap(),
                "-U",
                USER,
                &format!("--pwfile={}", server.dir.join("pw").display()),
                "--auth-local=trust",
                "--auth-host=scram-sha-256",
                "-E",
                "UTF8",
                "--no-locale",
            ],
        );
        if tls {
            // Connections without TLS are turned away.
            let hba = data.join("pg_hba.conf");
            let rules = std::fs::read_to_string(&hba).unwrap();
            std::fs::write(&hba, format!("hostnossl all all all reject\n{rules}")).unwrap();
        }
        server.pg_ctl_start();
        server
    }

    /// A CA, and a server certificate it signs for `db.invalid`.
    fn certificates(&self) {
        let openssl = |args: &[&str]| {
            let out = Command::new("openssl")
                .args(args)
                .current_dir(&self.dir)
                .output()
                .expect("openssl runs");
            assert!(
                out.status.success(),
                "openssl {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        openssl(&[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-days",
            "2",
            "-subj",
            "/CN=hql test CA",
        ]);
        openssl(&[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
            "-subj",
            "/CN=db.invalid",
        ]);
        std::fs::write(self.dir.join("san.ext"), "subjectAltName=DNS:db.invalid\n").unwrap();
        openssl(&[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.crt",
            "-days",
            "2",
            "-extfile",
            "san.ext",
        ]);
        let key = self.dir.join("server.key");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    }

    /// The CA that signed a TLS server's certificate.
    pub fn ca(&self) -> PathBuf {
        self.dir.join("ca.pem")
    }

    fn pg_ctl_start(&self) {
        let mut options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off",
            self.port,
            self.dir.display()
        );
        if self.tls {
            options.push_str(&format!(
                " -c ssl=on -c ssl_cert_file={} -c ssl_key_file={}",
                self.dir.join("server.crt").display(),
                self.dir.join("server.key").display()
            ));
        }
        self.must(
            "pg_ctl",
            &[
                "-D",
                self.dir.join("data").to_str().unwrap(),
                "-l",
                self.dir.join("log").to_str().unwrap(),
                "-o",
                &options,
                "-w",
                "start",
            ],
        );
    }

    /// Run one of the server's commands; its output.
    fn command(&self, program: &str, args: &[&str]) -> Output {
        let path = self.bin.join(program);
        let mut cmd = match self.as_user {
            Some(user) => {
                let mut c = Command::new("runuser");
                c.args(["-u", user, "--"]).arg(&path);
                c
            }
            None => Command::new(&path),
        };
        cmd.args(args).current_dir(&self.dir);
        cmd.output()
            .unwrap_or_else(|e| panic!("{program} runs: {e}"))
    }

    fn must(&self, program: &str, args: &[&str]) {
        let out = self.command(program, args);
        assert!(
            out.status.success(),
            "{program} failed:\n{}\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            std::fs::read_to_string(self.dir.join("log")).unwrap_or_default()
        );
    }

    /// The URL of database `db`, password and all.
    pub fn url(&self, db: &str) -> String {
        format!(
            "postgresql://{USER}:{PASSWORD}@127.0.0.1:{}/{db}",
            self.port
        )
    }

    /// A connection to database `db`, through the server's socket in its
    /// folder (trusted, and without TLS).
    pub fn client(&self, db: &str) -> postgres::Client {
        let mut config = postgres::Config::new();
        config
            .host_path(&self.dir)
            .port(self.port)
            .user(USER)
            .dbname(db);
        config
            .connect(postgres::NoTls)
            .unwrap_or_else(|e| panic!("connecting to {db}: {e}"))
    }

    /// Run `sql` (statements separated by `;`) in database `db`.
    pub fn sql(&self, db: &str, sql: &str) {
        self.client(db)
            .batch_execute(sql)
            .unwrap_or_else(|e| panic!("{sql}\n{e}"));
    }

    /// Stop the server at once, as a crash would.
    pub fn kill(&self) {
        let _ = self.command(
            "pg_ctl",
            &[
                "-D",
                self.dir.join("data").to_str().unwrap(),
                "-m",
                "immediate",
                "stop",
            ],
        );
    }

    /// Start the server again after [`Server::kill`].
    pub fn restart(&self) {
        self.pg_ctl_start();
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
