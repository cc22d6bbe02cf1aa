package turnstile_test

import (
	"net"
	"sync"
	"testing"
)

// freezingProxy forwards TCP connections to a target and can freeze them: bytes already read stay
// in the proxy and nothing more is forwarded either way, as if the network or the peer stalled,
// while both ends' writes keep succeeding into their buffers.
type freezingProxy struct {
	listener net.Listener
	target   string

	mu     sync.Mutex
	frozen chan struct{} // non-nil while frozen; closed to thaw
	conns  []net.Conn
	closed bool
	wg     sync.WaitGroup
}

func newFreezingProxy(t *testing.T, target string) *freezingProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &freezingProxy{listener: l, target: target}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.Close)
	return p
}

func (p *freezingProxy) address() string { return p.listener.Addr().String() }

func (p *freezingProxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.listener.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = client.Close()
			continue
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			_ = client.Close()
			_ = server.Close()
			return
		}
		p.conns = append(p.conns, client, server)
		p.wg.Add(2)
		p.mu.Unlock()
		go p.pipe(server, client)
		go p.pipe(client, server)
	}
}

// pipe copies from src to dst, holding each chunk while the proxy is frozen.
func (p *freezingProxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	defer dst.Close()
	buf := make([]byte, 32*1024)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			gate := p.frozen
			p.mu.Unlock()
			if gate != nil {
				<-gate
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil { // io.EOF or a closed connection: the other direction ends with dst
			return
		}
	}
}

// Freeze stops forwarding on every connection.
func (p *freezingProxy) Freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.frozen == nil {
		p.frozen = make(chan struct{})
	}
}

// Thaw forwards what was held and goes on forwarding, as when the network or the peer recovers.
func (p *freezingProxy) Thaw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.frozen != nil {
		close(p.frozen)
		p.frozen = nil
	}
}

// Close ends every connection and the listener, and waits for the proxy's goroutines.
func (p *freezingProxy) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	if p.frozen != nil {
		close(p.frozen)
		p.frozen = nil
	}
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	_ = p.listener.Close()
	p.wg.Wait()
}
