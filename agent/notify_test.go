package agent

import (
	"net"
	"path/filepath"
	"testing"
	"time"
)

// TestSystemdNotifier talks to a real unixgram socket, as systemd would
// provide one, via NOTIFY_SOCKET.
func TestSystemdNotifier(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "notify.sock")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	t.Setenv("NOTIFY_SOCKET", sock)

	SystemdNotifier{}.Status("kubeadm-init")
	SystemdNotifier{}.Status("failed: two\nlines")
	for _, want := range []string{"STATUS=kubeadm-init", "STATUS=failed: two lines"} {
		buf := make([]byte, 256)
		if err := conn.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
			t.Fatal(err)
		}
		n, err := conn.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(buf[:n]); got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}

func TestSystemdNotifierWithoutSocket(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", "")
	SystemdNotifier{Log: discardLogger()}.Status("discover") // must not panic or block
}
