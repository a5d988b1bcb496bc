//! A file of settings a person names (the config file, a prices file, a cluster's secret): read
//! whole as text, at most a size limit of it, from a regular file or a pipe (`/dev/stdin`,
//! `<(...)`), so that `/dev/zero`, a directory, or a FIFO no one writes to is a clear error or an
//! empty file, never a read without end.

use std::io::Read;
use std::path::Path;

/// Why a settings file could not be read.
#[derive(Debug)]
pub enum Unreadable {
    /// It cannot be opened or read (`NotFound` among them).
    Io(std::io::Error),
    /// It is no regular file: what it is.
    NotAFile(&'static str),
    /// It holds more than the limit, in bytes.
    TooLarge(u64),
    /// Its bytes are not UTF-8.
    NotText,
}

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unreadable::Io(e) => write!(f, "{e}"),
            Unreadable::NotAFile(kind) => write!(f, "not a regular file: {kind}"),
            Unreadable::TooLarge(limit) => {
                write!(f, "larger than {}, the most a settings file may hold", super::size::describe(*limit))
            }
            Unreadable::NotText => write!(f, "not UTF-8 text"),
        }
    }
}

/// The text of the regular file or pipe at `path`, of at most `limit` bytes. The file's kind is
/// looked at before it is opened; a FIFO is opened without waiting for a writer (one with none
/// reads as empty), and the read stops one byte past the limit, whatever the size the file
/// claims.
pub fn read(path: &Path, limit: u64) -> Result<String, Unreadable> {
    let meta = std::fs::metadata(path).map_err(Unreadable::Io)?;
    if !meta.is_file() && !is_pipe(&meta.file_type()) {
        return Err(Unreadable::NotAFile(kind_of(&meta.file_type())));
    }
    if meta.is_file() && meta.len() > limit {
        return Err(Unreadable::TooLarge(limit));
    }
    let file = open(path, !meta.is_file()).map_err(Unreadable::Io)?;
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes).map_err(Unreadable::Io)?;
    if bytes.len() as u64 > limit {
        return Err(Unreadable::TooLarge(limit));
    }
    String::from_utf8(bytes).map_err(|_| Unreadable::NotText)
}

#[cfg(unix)]
fn is_pipe(kind: &std::fs::FileType) -> bool {
    std::os::unix::fs::FileTypeExt::is_fifo(kind)
}

#[cfg(not(unix))]
fn is_pipe(_: &std::fs::FileType) -> bool {
    false
}

/// Opens `path` for reading; a pipe without waiting for a writer, then read as any file is.
#[cfg(unix)]
fn open(path: &Path, pipe: bool) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::io::AsRawFd;
    if !pipe {
        return std::fs::File::open(path);
    }
    let file = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path)?;
    // SAFETY: fcntl on a descriptor this function owns, with flags it read from it.
    let flags = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GETFL) };
    if flags < 0 || unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(file)
}

#[cfg(not(unix))]
fn open(path: &Path, _: bool) -> std::io::Result<std::fs::File> {
    std::fs::File::open(path)
}

fn kind_of(kind: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    if kind.is_dir() { "a directory" } else { "not a file" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_regular_file_within_the_limit_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.toml");
        std::fs::write(&file, "x = 1\n").unwrap();
        assert_eq!(read(&file, 6).unwrap(), "x = 1\n");
        assert!(matches!(read(&file, 5), Err(Unreadable::TooLarge(5))));
        assert!(matches!(read(dir.path(), 100), Err(Unreadable::NotAFile("a directory"))));
        #[cfg(unix)]
        assert!(matches!(read(Path::new("/dev/zero"), 100), Err(Unreadable::NotAFile("a character device"))));
        assert!(
            matches!(read(&dir.path().join("none"), 100), Err(Unreadable::Io(e)) if e.kind() == std::io::ErrorKind::NotFound)
        );
        std::fs::write(&file, [0xff, 0xfe]).unwrap();
        assert!(matches!(read(&file, 100), Err(Unreadable::NotText)));
    }

    /// A FIFO no one writes to is read as empty at once, not waited on; one written to is read,
    /// within the limit.
    #[cfg(unix)]
    #[test]
    fn a_fifo_is_read_without_waiting_for_a_writer() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("prices");
        let name = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a NUL-terminated path made above.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        assert_eq!(read(&fifo, 100).unwrap(), "");
        for (written, limit) in [(&b"x = 1\n"[..], 100), (&[b'x'; 1000][..], 100)] {
            // A writer that opens without waiting, and writes again only if the reader has not
            // read a while after (a write between the reader's end of file and its close is lost).
            let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
            let writer = {
                let (fifo, done, written) = (fifo.clone(), done.clone(), written.to_vec());
                std::thread::spawn(move || {
                    use std::os::unix::fs::OpenOptionsExt;
                    while !done.load(std::sync::atomic::Ordering::SeqCst) {
                        let opened = std::fs::OpenOptions::new()
                            .write(true)
                            .custom_flags(libc::O_NONBLOCK)
                            .open(&fifo);
                        match opened {
                            Ok(mut file) => {
                                drop(std::io::Write::write_all(&mut file, &written));
                                drop(file);
                                for _ in 0..1000 {
                                    if done.load(std::sync::atomic::Ordering::SeqCst) {
                                        return;
                                    }
                                    std::thread::sleep(std::time::Duration::from_millis(1));
                                }
                            }
                            Err(_) => std::thread::yield_now(),
                        }
                    }
                })
            };
            let mut result = read(&fifo, limit);
            while matches!(&result, Ok(text) if text.is_empty()) {
                result = read(&fifo, limit);
            }
            done.store(true, std::sync::atomic::Ordering::SeqCst);
            writer.join().unwrap();
            match written.len() > limit as usize {
                true => assert!(matches!(result, Err(Unreadable::TooLarge(100))), "{result:?}"),
                // The writer may have written again while the reader read.
                false => {
                    let text = result.unwrap();
                    assert_eq!(text, "x = 1\n".repeat(text.len() / 6), "{text:?}");
                }
            }
        }
    }
}
