package serve

import (
	"time"

	"github.com/coreos/go-systemd/v22/daemon"
)

// Notifier is serve's line to systemd (Type=notify, WatchdogSec=).
type Notifier interface {
	Ready()
	Stopping()
	Watchdog()
	// WatchdogInterval is systemd's WatchdogSec, 0 when none is set.
	WatchdogInterval() time.Duration
}

// Systemd sends sd_notify messages; outside systemd (no NOTIFY_SOCKET)
// every call does nothing.
type Systemd struct{}

var _ Notifier = Systemd{}

func (Systemd) Ready()    { _, _ = daemon.SdNotify(false, daemon.SdNotifyReady) }
func (Systemd) Stopping() { _, _ = daemon.SdNotify(false, daemon.SdNotifyStopping) }
func (Systemd) Watchdog() { _, _ = daemon.SdNotify(false, daemon.SdNotifyWatchdog) }

// WatchdogInterval reads WATCHDOG_USEC for this process.
func (Systemd) WatchdogInterval() time.Duration {
	d, err := daemon.SdWatchdogEnabled(false)
	if err != nil {
		return 0
	}
	return d
}

type nopNotifier struct{}

func (nopNotifier) Ready()                          {}
func (nopNotifier) Stopping()                       {}
func (nopNotifier) Watchdog()                       {}
func (nopNotifier) WatchdogInterval() time.Duration { return 0 }
