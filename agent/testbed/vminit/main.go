// Command vminit is PID 1 of a test-bed VM: the bed starts it in new PID,
// mount, UTS, IPC and network namespaces, and it makes them a host of its
// own, the way an image's boot would: the VM's disk (overlays on /etc, /var
// and /usr), a fresh /run, /tmp and /proc, the image's hostname and sysctls,
// then the services the image enables. Being PID 1, its death takes every
// process of the VM with it, so a killed VM can never leak a process, a
// mount or a namespace.
//
// With --switch it only holds a network namespace (the bed's switch).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(s string) error { *m = append(*m, s); return nil }

func main() {
	var (
		sw       = flag.Bool("switch", false, "only hold a network namespace")
		disk     = flag.String("disk", "", "directory holding the VM's disk: <disk>/{etc,var,usr}/{upper,work}")
		hostname = flag.String("hostname", "", "hostname the image boots with, when the disk's /etc/hostname names none")
		sysctls  multiFlag
		units    multiFlag
		services multiFlag
		waitFor  multiFlag
	)
	flag.Var(&sysctls, "sysctl", "key=value applied at boot (repeatable), as systemd-sysctl would from the image's sysctl.d")
	flag.Var(&units, "unit-active", "unit marked active at boot for the systemctl stand-in (repeatable)")
	flag.Var(&services, "service", "name=command line started at boot, output to /var/log/<name>.log (repeatable)")
	flag.Var(&waitFor, "wait-for", "path a service creates when ready; boot is over once all exist (repeatable)")
	flag.Parse()

	if *sw {
		fmt.Println("ready")
		waitForSignal()
		return
	}
	if err := setup(*disk, *hostname, sysctls); err != nil {
		fmt.Printf("error: %v\n", err)
		os.Exit(1)
	}
	fmt.Println("mounted")
	// The bed now plugs the network in and says "boot" (network-online).
	line, err := bufio.NewReader(os.Stdin).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "boot" {
		fmt.Printf("error: expected boot, got %q (%v)\n", line, err)
		os.Exit(1)
	}
	if err := boot(units, services); err != nil {
		fmt.Printf("error: %v\n", err)
		os.Exit(1)
	}
	if err := awaitReady(waitFor, 30*time.Second); err != nil {
		fmt.Printf("error: %v\n", err)
		os.Exit(1)
	}
	fmt.Println("booted")
	reapUntilSignal()
}

// setup builds the VM's file system view and identity.
func setup(disk, hostname string, sysctls []string) error {
	if disk == "" || hostname == "" {
		return fmt.Errorf("--disk and --hostname are required")
	}
	// Nothing mounted here may propagate back to the host.
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making / private: %w", err)
	}
	for _, d := range []string{"etc", "var", "usr"} {
		upper, work := filepath.Join(disk, d, "upper"), filepath.Join(disk, d, "work")
		for _, p := range []string{upper, work} {
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
		}
		// <disk>/<d>/image, when there, is the image's read-only layer
		// (the bed's hard links to the host's binaries): writes copy up.
		lower := "/" + d
		if st, err := os.Stat(filepath.Join(disk, d, "image")); err == nil && st.IsDir() {
			lower = filepath.Join(disk, d, "image") + ":" + lower
		}
		opts := fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s", lower, upper, work)
		if err := syscall.Mount("overlay", "/"+d, "overlay", 0, opts); err != nil {
			return fmt.Errorf("mounting the overlay on /%s: %w", d, err)
		}
	}
	mounts := []struct{ src, dst, fs, opts string }{
		{"proc", "/proc", "proc", ""},
		{"tmpfs", "/run", "tmpfs", "mode=0755,size=256m"},
		{"tmpfs", "/tmp", "tmpfs", "mode=1777,size=256m"},
	}
	for _, m := range mounts {
		if err := syscall.Mount(m.src, m.dst, m.fs, syscall.MS_NOSUID|syscall.MS_NODEV, m.opts); err != nil {
			return fmt.Errorf("mounting %s on %s: %w", m.fs, m.dst, err)
		}
	}
	if err := os.MkdirAll("/run/lock", 0o1777); err != nil {
		return err
	}
	// As systemd does at boot (hostname_setup reads the static hostname
	// from /etc/hostname), the disk decides: a name the agent set survives
	// a reboot, and the image's is only the fallback.
	if b, err := os.ReadFile("/etc/hostname"); err == nil {
		if h := strings.TrimSpace(string(b)); h != "" {
			hostname = h
		}
	}
	if err := syscall.Sethostname([]byte(hostname)); err != nil {
		return fmt.Errorf("setting the hostname: %w", err)
	}
	for _, s := range sysctls {
		k, v, ok := strings.Cut(s, "=")
		if !ok {
			return fmt.Errorf("--sysctl %q: want key=value", s)
		}
		p := "/proc/sys/" + strings.ReplaceAll(strings.TrimSpace(k), ".", "/")
		if err := os.WriteFile(p, []byte(strings.TrimSpace(v)), 0o644); err != nil {
			return fmt.Errorf("sysctl %s: %w", k, err)
		}
	}
	return nil
}

// boot marks the enabled units active and starts the services, each in its
// own session, as systemd would.
func boot(units, services []string) error {
	if err := os.MkdirAll("/run/systemd-stub", 0o755); err != nil {
		return err
	}
	for _, u := range units {
		for _, f := range []string{u, u + ".starts"} {
			if err := os.WriteFile("/run/systemd-stub/"+f, []byte("1\n"), 0o644); err != nil {
				return err
			}
		}
	}
	for _, s := range services {
		name, cmdline, ok := strings.Cut(s, "=")
		if !ok {
			return fmt.Errorf("--service %q: want name=command", s)
		}
		args := strings.Fields(cmdline)
		log, err := os.OpenFile("/var/log/"+name+".log", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
		cmd.Stdout, cmd.Stderr, cmd.Dir = log, log, "/"
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			log.Close()
			return fmt.Errorf("starting %s: %w", name, err)
		}
		log.Close()
	}
	return nil
}

// awaitReady waits for the services' readiness marks, as systemd holds
// units ordered After= a Type=notify service until it is ready: the
// agent's unit comes after containerd.service, so its socket is there.
func awaitReady(paths []string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for _, p := range paths {
		for {
			if _, err := os.Stat(p); err == nil {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s did not appear within %s", p, timeout)
			}
			reap()
			time.Sleep(20 * time.Millisecond)
		}
	}
	return nil
}

// reapUntilSignal is PID 1's duty: collect every orphan. SIGTERM is a clean
// shutdown: every process gets SIGTERM, stragglers SIGKILL after 10 s.
func reapUntilSignal() {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for sig := range sigs {
		reap()
		if sig == syscall.SIGCHLD {
			continue
		}
		_ = syscall.Kill(-1, syscall.SIGTERM)
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) && reap() {
			time.Sleep(50 * time.Millisecond)
		}
		_ = syscall.Kill(-1, syscall.SIGKILL)
		for reap() {
			time.Sleep(10 * time.Millisecond)
		}
		return
	}
}

// reap collects exited children and reports whether any child remains.
func reap() bool {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if err == syscall.ECHILD {
			return false
		}
		if pid <= 0 {
			return true
		}
	}
}

func waitForSignal() {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
}
