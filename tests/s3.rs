//! An S3-compatible server on loopback for the tests: s3s-fs in this process, checking request
//! signatures as S3 does, its buckets folders of a temporary directory; and the environment
//! that points a txq process (or this one) at it. Beside it, the stores that misbehave: a proxy
//! to it that replaces an object when its first read arrives, an endpoint that accepts
//! connections and never answers, and one that lists an object and refuses to give it.

use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::path::Path as StorePath;
use object_store::{ObjectStoreExt, PutPayload};
use std::net::SocketAddr;
use std::path::Path;

pub const ACCESS_KEY: &str = "txq-test-access-key";
pub const SECRET_KEY: &str = "txq-test-secret-key-0123456789";
pub const REGION: &str = "us-east-1";

/// A running server: it serves until the test process ends.
pub struct S3Server {
    pub addr: SocketAddr,
    _root: tempfile::TempDir,
}

/// The one server of this test process (each test uses buckets of its own).
pub fn server() -> &'static S3Server {
    static SERVER: std::sync::OnceLock<S3Server> = std::sync::OnceLock::new();
    SERVER.get_or_init(start)
}

fn start() -> S3Server {
    use hyper_util::rt::{TokioExecutor, TokioIo};
    use hyper_util::server::conn::auto::Builder as ConnBuilder;
    use s3s::auth::SimpleAuth;
    use s3s::service::S3ServiceBuilder;
    let root = tempfile::tempdir().expect("temp dir");
    let fs = s3s_fs::FileSystem::new(root.path()).expect("s3s-fs over a folder");
    let mut builder = S3ServiceBuilder::new(fs);
    builder.set_auth(SimpleAuth::from_single(ACCESS_KEY, SECRET_KEY));
    let service = builder.build();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    listener.set_nonblocking(true).expect("non-blocking listener");
    let addr = listener.local_addr().expect("its address");
    // A runtime of the server's own, on a thread of its own: a test's runtime may end first.
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("the server's runtime");
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("tokio listener");
            let http = ConnBuilder::new(TokioExecutor::new());
            loop {
                let Ok((socket, _)) = listener.accept().await else { continue };
                let connection = http.serve_connection(TokioIo::new(socket), service.clone()).into_owned();
                tokio::spawn(connection);
            }
        });
    });
    S3Server { addr, _root: root }
}

impl S3Server {
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The variables that point object_store at this server, with the right keys.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ACCESS_KEY_ID", ACCESS_KEY.to_string()),
            ("AWS_SECRET_ACCESS_KEY", SECRET_KEY.to_string()),
            ("AWS_REGION", REGION.to_string()),
            ("AWS_ENDPOINT_URL", self.endpoint()),
            ("AWS_ALLOW_HTTP", "true".to_string()),
        ]
    }

    /// A store of one bucket of this server.
    pub fn bucket(&self, bucket: &str) -> AmazonS3 {
        AmazonS3Builder::new()
            .with_endpoint(self.endpoint())
            .with_allow_http(true)
            .with_region(REGION)
            .with_access_key_id(ACCESS_KEY)
            .with_secret_access_key(SECRET_KEY)
            .with_bucket_name(bucket)
            .build()
            .expect("an S3 store")
    }

    /// Makes bucket `bucket` and puts every file below `dir` in it under `prefix/` (their paths
    /// below `dir`); how many files.
    pub fn upload(&self, bucket: &str, dir: &Path, prefix: &str) -> usize {
        self.make_bucket(bucket);
        let store = self.bucket(bucket);
        let files: Vec<_> = walkdir::WalkDir::new(dir)
            .into_iter()
            .map(|e| e.expect("a walk of the corpus"))
            .filter(|e| e.file_type().is_file())
            .collect();
        crate::util::runtime().block_on(async {
            for entry in &files {
                let below = entry.path().strip_prefix(dir).unwrap().to_str().expect("UTF-8 names");
                let key = StorePath::parse(format!("{prefix}/{below}")).expect("a valid key");
                let bytes = std::fs::read(entry.path()).unwrap();
                store.put(&key, PutPayload::from(bytes)).await.expect("the object is put");
            }
        });
        files.len()
    }

    /// Makes a bucket: a folder of the server's root (object_store has no call that makes one).
    pub fn make_bucket(&self, bucket: &str) {
        let _ = std::fs::create_dir_all(self._root.path().join(bucket));
    }

    /// Puts `bytes` under `key` by writing the file the server keeps it as: for a key that
    /// object_store refuses to name (a control character in it).
    pub fn put_as_file(&self, bucket: &str, key: &str, bytes: &[u8]) {
        let file = self._root.path().join(bucket).join(key);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, bytes).unwrap();
    }

    /// The endpoint of a proxy to this server that, when the first request naming `name` (an
    /// object's read) arrives, runs `replace` before passing it on.
    pub fn replacing_proxy(&self, name: &str, replace: impl FnOnce() + Send + 'static) -> String {
        let upstream = self.addr;
        let name = name.as_bytes().to_vec();
        let replace = std::sync::Arc::new(std::sync::Mutex::new(Some(replace)));
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(mut client) = client else { continue };
                let Ok(mut server) = std::net::TcpStream::connect(upstream) else { continue };
                let (mut client_back, mut server_back) =
                    (client.try_clone().unwrap(), server.try_clone().unwrap());
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut server_back, &mut client_back);
                });
                let (name, replace) = (name.clone(), replace.clone());
                std::thread::spawn(move || {
                    use std::io::{Read, Write};
                    let mut buffer = vec![0u8; 64 * 1024];
                    while let Ok(n) = client.read(&mut buffer) {
                        if n == 0 {
                            break;
                        }
                        let bytes = &buffer[..n];
                        if bytes.starts_with(b"GET ") && bytes.windows(name.len()).any(|w| w == name) {
                            let once = replace.lock().unwrap().take();
                            if let Some(replace) = once {
                                replace();
                            }
                        }
                        if server.write_all(bytes).is_err() {
                            break;
                        }
                    }
                    let _ = server.shutdown(std::net::Shutdown::Write);
                });
            }
        });
        endpoint
    }
}

/// The endpoint of a store that accepts connections and never answers on them.
pub fn silent_endpoint() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for connection in listener.incoming() {
            held.extend(connection.ok());
        }
    });
    endpoint
}

/// The endpoint of a store whose every listing holds one object, `key` of `size` bytes, and
/// which answers every read of it with status 403 and `body`.
pub fn refusing_endpoint(key: &str, size: usize, body: &str) -> String {
    use std::io::{BufRead, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    let listing = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><ListBucketResult><KeyCount>1</KeyCount>\
         <IsTruncated>false</IsTruncated><Contents><Key>{key}</Key>\
         <LastModified>2026-11-01T00:00:00.000Z</LastModified><ETag>\"0123\"</ETag><Size>{size}</Size>\
         </Contents></ListBucketResult>"
    );
    let body = body.to_string();
    std::thread::spawn(move || {
        for connection in listener.incoming() {
            let Ok(connection) = connection else { continue };
            let (listing, body) = (listing.clone(), body.clone());
            std::thread::spawn(move || {
                let mut writer = connection.try_clone().unwrap();
                let mut reader = std::io::BufReader::new(connection);
                loop {
                    let mut head = Vec::new();
                    loop {
                        let mut line = String::new();
                        match reader.read_line(&mut line) {
                            Ok(0) | Err(_) => return,
                            Ok(_) if line == "\r\n" => break,
                            Ok(_) => head.push(line),
                        }
                    }
                    let listed = head.first().is_some_and(|l| l.contains("list-type=2"));
                    let (status, text) = match listed {
                        true => ("200 OK", &listing),
                        false => ("403 Forbidden", &body),
                    };
                    let response = format!(
                        "HTTP/1.1 {status}\r\ncontent-type: application/xml\r\ncontent-length: {}\r\n\r\n{text}",
                        text.len()
                    );
                    if writer.write_all(response.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    endpoint
}
