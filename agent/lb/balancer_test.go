package lb

import (
	"bufio"
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// echoServer answers each line with "<name>:<line>" until stopped.
type echoServer struct {
	name string
	ln   net.Listener
	mu   sync.Mutex
	cs   []net.Conn
}

func startEcho(t *testing.T, name string) *echoServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &echoServer{name: name, ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.cs = append(s.cs, c)
			s.mu.Unlock()
			go func() {
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					_, _ = c.Write([]byte(s.name + ":" + line))
				}
			}()
		}
	}()
	t.Cleanup(s.stop)
	return s
}

func (s *echoServer) addr() string { return s.ln.Addr().String() }

// stop closes the listener and every connection: a master going away.
func (s *echoServer) stop() {
	_ = s.ln.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.cs {
		_ = c.Close()
	}
}

func startBalancer(t *testing.T, backends ...string) (*Balancer, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// A stopped backend refuses at once; the timeout only has to outlast
	// a dial on a loaded 2-core machine (it failed once at 500 ms with
	// the whole suite running beside it).
	b := &Balancer{DialTimeout: 3 * time.Second}
	b.SetBackends(backends)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = b.Serve(ctx, ln); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return b, ln.Addr().String()
}

// ask sends one line over a fresh connection and returns who answered.
func ask(t *testing.T, addr string) (string, error) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := c.Write([]byte("hi\n")); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return "", err
	}
	name, _, _ := strings.Cut(line, ":")
	return name, nil
}

func TestBalancerRoundRobinAndFailover(t *testing.T) {
	t.Parallel()
	a, b2, c := startEcho(t, "a"), startEcho(t, "b"), startEcho(t, "c")
	_, addr := startBalancer(t, a.addr(), b2.addr(), c.addr())
	seen := map[string]int{}
	for range 6 {
		who, err := ask(t, addr)
		if err != nil {
			t.Fatal(err)
		}
		seen[who]++
	}
	if seen["a"] != 2 || seen["b"] != 2 || seen["c"] != 2 {
		t.Errorf("round robin over 3 backends, 6 connections: %v", seen)
	}
	// One master goes away: every new connection still gets an answer,
	// from the others, without waiting for a health check.
	b2.stop()
	for range 6 {
		who, err := ask(t, addr)
		if err != nil || who == "b" {
			t.Fatalf("after b stopped: %q, %v", who, err)
		}
	}
}

func TestBalancerClosesConnectionsOfADownBackend(t *testing.T) {
	t.Parallel()
	a := startEcho(t, "a")
	b, addr := startBalancer(t, a.addr())
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("x\n")); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	if _, err := r.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	// The backend's listener goes (the host is gone; its established
	// connections would hang on a real network): the health check marks
	// it down and the balancer cuts the client off, so it reconnects.
	_ = a.ln.Close()
	b.CheckHealth(context.Background())
	if up := b.Backends()[a.addr()]; up {
		t.Fatal("backend still healthy after its listener closed")
	}
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := r.ReadString('\n'); err == nil {
		t.Fatal("the client's connection to a down backend stayed open")
	}
}

func TestBalancerWithoutBackendsRefuses(t *testing.T) {
	t.Parallel()
	_, addr := startBalancer(t)
	if who, err := ask(t, addr); err == nil {
		t.Fatalf("answered by %q with no backend", who)
	}
	dead := startEcho(t, "x")
	dead.stop()
	b, addr := startBalancer(t, dead.addr())
	if _, err := ask(t, addr); err == nil {
		t.Fatal("answered with only a dead backend")
	}
	if b.Backends()[dead.addr()] {
		t.Error("a backend that refused stays healthy")
	}
}

func TestSetBackendsDropsRemoved(t *testing.T) {
	t.Parallel()
	a, c := startEcho(t, "a"), startEcho(t, "c")
	b, addr := startBalancer(t, a.addr(), c.addr())
	if !b.SetBackends([]string{c.addr()}) || b.SetBackends([]string{c.addr()}) {
		t.Fatal("SetBackends reports changes wrongly")
	}
	for range 4 {
		if who, err := ask(t, addr); err != nil || who != "c" {
			t.Fatalf("%q, %v; want c only", who, err)
		}
	}
}
