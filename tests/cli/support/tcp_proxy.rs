//! A plain TCP relay on 127.0.0.1 in front of a broker, for outages that a frozen broker
//! cannot show: [`TcpProxy::down`] resets every open connection and closes the port (new
//! connections are refused), [`TcpProxy::up`] listens on the same port again. The broker
//! advertises the proxy's port, so clients only ever reach it through here.

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub struct TcpProxy {
    port: u16,
    backend: Arc<Mutex<Option<SocketAddr>>>,
    /// Bumped by `down`: relays of an older generation close their sockets.
    generation: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    listener: Option<TcpListener>,
}

impl TcpProxy {
    /// Reserves a free port (listening, nothing relayed until [`TcpProxy::serve`]).
    pub fn bind() -> TcpProxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        TcpProxy {
            port: listener.local_addr().unwrap().port(),
            backend: Arc::new(Mutex::new(None)),
            generation: Arc::new(AtomicU64::new(0)),
            stop: Arc::new(AtomicBool::new(false)),
            listener: Some(listener),
        }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn bootstrap(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Relays every connection to `backend` from now on.
    pub fn serve(&mut self, backend: SocketAddr) {
        *self.backend.lock().unwrap() = Some(backend);
        self.accept_loop();
    }

    /// The outage: open connections are reset and the port refuses new ones.
    pub fn down(&mut self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
        // The accept loop of this generation drops its listener when it sees the bump.
        std::thread::sleep(Duration::from_millis(100));
    }

    /// The end of the outage: the same port accepts again.
    pub fn up(&mut self) {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let listener = loop {
            match TcpListener::bind(("127.0.0.1", self.port)) {
                Ok(l) => break l,
                Err(e) if std::time::Instant::now() < deadline => {
                    let _ = e;
                    std::thread::sleep(Duration::from_millis(50));
                }
                Err(e) => panic!("cannot listen on port {} again: {e}", self.port),
            }
        };
        self.listener = Some(listener);
        self.accept_loop();
    }

    fn accept_loop(&mut self) {
        let listener = self.listener.take().expect("a listener to serve");
        listener.set_nonblocking(true).unwrap();
        let backend = self.backend.lock().unwrap().expect("serve first");
        let (generation, stop) = (self.generation.clone(), self.stop.clone());
        let mine = generation.load(Ordering::SeqCst);
        std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) && generation.load(Ordering::SeqCst) == mine {
                match listener.accept() {
                    Ok((conn, _)) => {
                        let (generation, stop) = (generation.clone(), stop.clone());
                        std::thread::spawn(move || relay(conn, backend, &generation, mine, &stop));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
            // Dropping the listener closes the port: connects are refused.
        });
    }
}

impl Drop for TcpProxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

fn relay(
    client: TcpStream,
    backend: SocketAddr,
    generation: &AtomicU64,
    mine: u64,
    stop: &AtomicBool,
) {
    let _ = client.set_nonblocking(false);
    let Ok(server) = TcpStream::connect(backend) else {
        return;
    };
    let live = || !stop.load(Ordering::SeqCst) && generation.load(Ordering::SeqCst) == mine;
    let idle = |e: &std::io::Error| matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut);
    let _ = client.set_read_timeout(Some(Duration::from_millis(5)));
    let _ = server.set_read_timeout(Some(Duration::from_millis(5)));
    let (Ok(mut c), Ok(mut s)) = (client.try_clone(), server.try_clone()) else {
        return;
    };
    let (mut c2, mut s2) = (client, server);
    let mut buf = vec![0u8; 64 * 1024];
    'relay: while live() {
        for (from, to) in [(&mut c, &mut s), (&mut s2, &mut c2)] {
            match from.read(&mut buf) {
                Ok(0) => break 'relay,
                Ok(n) => {
                    if to.write_all(&buf[..n]).is_err() {
                        break 'relay;
                    }
                }
                Err(e) if idle(&e) => {}
                Err(_) => break 'relay,
            }
        }
    }
    // Both sides see the connection end at once, mid-request or not.
    let _ = c.shutdown(Shutdown::Both);
    let _ = s.shutdown(Shutdown::Both);
}
