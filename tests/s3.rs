//! An S3-compatible server on loopback for the tests: s3s-fs in this process, checking request
//! signatures as S3 does, its buckets folders of a temporary directory; and the environment
//! that points a txq process (or this one) at it.

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
}
