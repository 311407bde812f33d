//! The public TCP front of the server. `tiny_http` never lets go of a keep-alive socket, so
//! the server's public port is this relay: every client connection is piped to the HTTP
//! engine on a private loopback port, and the relay keeps both sockets so that it can
//! (a) drop the one connection a request came in on (found by the engine-side peer
//! address the request reports), and (b) close every connection at shutdown so that no
//! thread stays blocked on a client that keeps its connection open.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};

/// One relayed connection: the client's socket and ours towards the engine.
struct Pipe {
    client: TcpStream,
    engine: TcpStream,
}

impl Pipe {
    fn close(&self) {
        let _ = self.client.shutdown(Shutdown::Both);
        let _ = self.engine.shutdown(Shutdown::Both);
    }
}

#[derive(Default)]
struct Table {
    /// Keyed by the engine-side local address, which the engine reports as the peer.
    pipes: HashMap<SocketAddr, Pipe>,
    threads: Vec<JoinHandle<()>>,
}

/// The accept loop and its live connections.
pub struct Relay {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    table: Arc<Mutex<Table>>,
    acceptor: Mutex<Option<JoinHandle<()>>>,
}

impl Relay {
    /// Binds `127.0.0.1:<port>` and pipes every accepted connection to `engine`.
    pub fn start(port: u16, engine: SocketAddr) -> io::Result<Relay> {
        let listener = TcpListener::bind(("127.0.0.1", port))?;
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let table = Arc::new(Mutex::new(Table::default()));
        let acceptor = {
            let (stop, table) = (stop.clone(), table.clone());
            thread::Builder::new()
                .name("registry-relay-accept".into())
                .spawn(move || accept_loop(listener, engine, &stop, table))?
        };
        Ok(Relay {
            addr,
            stop,
            table,
            acceptor: Mutex::new(Some(acceptor)),
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Closes the client connection whose engine-side address is `engine_peer`, without an answer.
    pub fn drop_connection(&self, engine_peer: SocketAddr) {
        if let Some(pipe) = lock(&self.table).pipes.remove(&engine_peer) {
            pipe.close();
        }
    }

    /// Stops accepting, closes every connection and joins every thread.
    pub fn shutdown(&self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the blocking accept; if the connect fails the listener is already gone.
        let _ = TcpStream::connect(self.addr);
        let acceptor = self
            .acceptor
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(h) = acceptor {
            let _ = h.join();
        }
        let (pipes, threads) = {
            let mut t = lock(&self.table);
            (std::mem::take(&mut t.pipes), std::mem::take(&mut t.threads))
        };
        for pipe in pipes.values() {
            pipe.close();
        }
        for h in threads {
            let _ = h.join();
        }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn lock(table: &Mutex<Table>) -> std::sync::MutexGuard<'_, Table> {
    table.lock().unwrap_or_else(|p| p.into_inner())
}

fn accept_loop(
    listener: TcpListener,
    engine: SocketAddr,
    stop: &AtomicBool,
    table: Arc<Mutex<Table>>,
) {
    for conn in listener.incoming() {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        let Ok(client) = conn else { continue };
        if let Err(e) = open_pipe(client, engine, &table) {
            tracing::debug!("registry relay: cannot pipe a connection: {e}");
        }
    }
}

fn open_pipe(client: TcpStream, engine: SocketAddr, table: &Arc<Mutex<Table>>) -> io::Result<()> {
    let upstream = TcpStream::connect(engine)?;
    let _ = client.set_nodelay(true);
    let _ = upstream.set_nodelay(true);
    let key = upstream.local_addr()?;
    let pipe = Pipe {
        client: client.try_clone()?,
        engine: upstream.try_clone()?,
    };
    let (client_in, engine_out) = (client.try_clone()?, upstream.try_clone()?);
    let forget = table.clone();
    let mut t = lock(table);
    t.threads.retain(|h| !h.is_finished());
    t.pipes.insert(key, pipe);
    let up = thread::Builder::new()
        .name("registry-relay-up".into())
        .spawn(move || copy_then_close(client_in, engine_out))?;
    let down = thread::Builder::new()
        .name("registry-relay-down".into())
        .spawn(move || {
            copy_then_close(upstream, client);
            // The engine side ends last in every orderly close: release the sockets.
            lock(&forget).pipes.remove(&key);
        })?;
    t.threads.push(up);
    t.threads.push(down);
    Ok(())
}

/// Copies until either side ends, then ends both directions so the twin thread stops too.
fn copy_then_close(mut from: TcpStream, mut to: TcpStream) {
    let mut buf = [0u8; 8192];
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if to.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
        }
    }
    let _ = to.shutdown(Shutdown::Write);
    let _ = from.shutdown(Shutdown::Read);
}
