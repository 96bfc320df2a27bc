package agent

import (
	"log/slog"
	"strings"

	"github.com/coreos/go-systemd/v22/daemon"
)

// Notifier tells the service manager what the agent is doing.
type Notifier interface {
	Status(s string)
}

// SystemdNotifier sends sd_notify STATUS= lines, shown by `systemctl
// status`. Without NOTIFY_SOCKET (not under systemd) it does nothing.
type SystemdNotifier struct {
	Log *slog.Logger
}

var _ Notifier = SystemdNotifier{}

// Status sends STATUS=s. A failure to notify is logged, never fatal.
func (n SystemdNotifier) Status(s string) {
	if _, err := daemon.SdNotify(false, "STATUS="+SanitizeStatus(s)); err != nil && n.Log != nil {
		n.Log.Warn("sd_notify failed", "error", err)
	}
}

// SanitizeStatus keeps a status on one line: sd_notify reads one
// assignment per line.
func SanitizeStatus(s string) string {
	return strings.NewReplacer("\n", " ", "\r", " ").Replace(s)
}

// nopNotifier is for callers without a service manager (tests, benchmarks).
type nopNotifier struct{}

func (nopNotifier) Status(string) {}
