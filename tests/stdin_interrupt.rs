//! Ctrl-C while txq waits for its SQL on stdin: stdin is read off the async workers, so the
//! signal is answered at once, the script ending as any script Ctrl-C stops (exit 130,
//! `txq: query cancelled`), not left waiting for a pipe that never closes.

use std::io::{BufRead, Write};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// How long a test waits for txq before it gives up: a guard against a hang, not a measure.
const DEADLINE: Duration = Duration::from_secs(60);

#[cfg(unix)]
#[test]
fn ctrl_c_while_waiting_on_a_stdin_that_never_closes_ends_the_script_with_exit_130() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = crate::util::command(dir.path())
        .args(["--no-cache", "."])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A statement with no end of input after it: txq reads on, waiting for the pipe to close.
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"select 1 as one;\n").unwrap();
    stdin.flush().unwrap();
    // The note that there is nothing to read comes once Ctrl-C is watched, before stdin is read.
    let (lines_tx, lines) = std::sync::mpsc::channel::<String>();
    let stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = lines_tx.send(line);
        }
    });
    let mut said = Vec::new();
    loop {
        match lines.recv_timeout(DEADLINE) {
            Ok(line) if line.starts_with("txq: note: no transcripts in") => break,
            Ok(line) => said.push(line),
            Err(e) => {
                let _ = child.kill();
                panic!("no note from txq ({e}); it said {said:?}");
            }
        }
    }
    assert!(child.try_wait().unwrap().is_none(), "txq ended before it read its SQL: {said:?}");
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let bound = Instant::now() + DEADLINE;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > bound {
            let _ = child.kill();
            panic!("txq still waits on stdin a minute after Ctrl-C");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    reader.join().unwrap();
    let rest: Vec<String> = lines.try_iter().collect();
    assert_eq!(status.code(), Some(130), "{rest:?}");
    assert_eq!(rest, ["txq: query cancelled"]);
    let mut stdout = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut stdout).unwrap();
    assert_eq!(stdout, "", "no statement ran");
    drop(stdin);
}
