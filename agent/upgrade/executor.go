package upgrade

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/onekube/onekube/agent/bundle"
	"github.com/onekube/onekube/agent/system"
)

// Executor runs this node's upgrade once the acting master grants it
// (grant.<node> in the plan ConfigMap). Every step is idempotent, and the
// state file says which finished, so a crash anywhere resumes.
type Executor struct {
	NodeName string
	Plan     PlanSource
	Disks    Disks
	Mounter  Mounter
	Exec     system.Exec
	Publish  Publisher
	Clock    system.Clock

	StateFile string // /var/lib/onekube/upgrade-node.json
	MountDir  string // /run/onekube/bundle
	BinDir    string // /usr/bin

	// AttachWait bounds the wait for the attached disk's label to show.
	AttachWait time.Duration
	// IgnorePreflight are the kubeadm preflight checks the operator has
	// this VM ignore (ONEAPP_K8S_IGNORE_PREFLIGHT_ERRORS), as its init or
	// join did: `upgrade apply` and `upgrade node` run preflight too
	// (cmd/kubeadm/app/cmd/upgrade/common.go runPreflightChecks), and a
	// check the host fails at init fails there again.
	IgnorePreflight []string
	// Notice, when set, gets what the owner should know of an upgrade
	// that succeeded (the bundle left attached under a hardened OneGate).
	Notice func(msg string)

	// doneClaimed: this process has claimed done for that target once; a
	// claim per poll would be a Node write every 30 s on every node.
	doneClaimed string
}

// Timeouts of the commands a step runs.
const (
	kubeadmTimeout = 15 * time.Minute // apply pulls nothing (images are imported) but waits for static pods
	importTimeout  = 5 * time.Minute
	systemdTimeout = time.Minute
	attachPoll     = 2 * time.Second
)

// RunOnce does what the plan asks of this node now: nothing without a
// plan or a grant; otherwise the remaining steps. It returns the step's
// error after recording and reporting it.
func (e *Executor) RunOnce(ctx context.Context) error {
	data, found, err := e.Plan.ReadPlan(ctx)
	if err != nil || !found {
		return err
	}
	mode := Grants(data)[e.NodeName]
	if mode == "" {
		return nil
	}
	p, err := ParsePlan(data)
	if err != nil {
		return err
	}
	st, err := LoadNodeState(e.StateFile)
	if err != nil || st.Target != p.Target.String() || st.BundleSHA != p.BundleSHA {
		st = NodeState{Target: p.Target.String(), BundleSHA: p.BundleSHA} // a new plan, or a corrupt record: start over
	}
	if st.Done == StepDone {
		if e.doneClaimed == st.Target {
			return nil
		}
		if err := e.report(ctx, p, StepDone, ""); err != nil {
			return err
		}
		e.doneClaimed = st.Target
		return nil
	}
	if st.Failed != "" {
		if st.FailedAttempt == p.Attempt {
			return nil // stopped; the owner's next run of the CLI bumps the attempt
		}
		st.Failed, st.FailedAttempt = "", 0
	}
	run := &nodeRun{e: e, plan: p, mode: mode}
	for _, step := range NextSteps(st) {
		if err := e.report(ctx, p, step, ""); err != nil {
			return err
		}
		if err := run.do(ctx, step); err != nil {
			st.Failed, st.FailedAttempt = string(step)+": "+brief(err), p.Attempt
			err = fmt.Errorf("upgrade step %s: %w", step, err)
			if serr := SaveNodeState(e.StateFile, st); serr != nil {
				return errors.Join(err, serr)
			}
			return errors.Join(err, e.report(ctx, p, StepFailed, st.Failed))
		}
		if stepIndex(step) > stepIndex(st.Done) {
			st.Done = step
		}
		if err := SaveNodeState(e.StateFile, st); err != nil {
			return err
		}
		if step == StepDone {
			e.doneClaimed = st.Target
			e.notice(ctx, p, run.note)
		}
	}
	return nil
}

// notice shows note beside this node's done step in OneGate (display
// only, never on the Node: the orchestrator reads its error annotation as
// a failure's) and hands it to Notice.
func (e *Executor) notice(ctx context.Context, p Plan, note string) {
	if note == "" {
		return
	}
	if e.Publish != nil {
		_ = e.Publish.Publish(ctx, FormatStepClaim(p.Target, StepDone), note)
	}
	if e.Notice != nil {
		e.Notice(note)
	}
}

// report claims step on the Node (what the orchestrator waits on) and
// publishes it to OneGate (display only; a failure there is not fatal).
func (e *Executor) report(ctx context.Context, p Plan, step Step, errText string) error {
	if err := e.Plan.Annotate(ctx, FormatStepClaim(p.Target, step), errText); err != nil {
		return fmt.Errorf("reporting step %s: %w", step, err)
	}
	if e.Publish != nil {
		_ = e.Publish.Publish(ctx, FormatStepClaim(p.Target, step), errText)
	}
	return nil
}

// nodeRun carries what one run learnt (the verified manifest) between steps.
type nodeRun struct {
	e        *Executor
	plan     Plan
	mode     Mode
	manifest *bundle.Manifest
	// note is what the owner should know of a step that succeeded (the
	// bundle left attached); shown with the done claim.
	note string
}

func (r *nodeRun) do(ctx context.Context, step Step) error {
	e := r.e
	switch step {
	case StepAttach:
		return r.attach(ctx)
	case StepMount:
		dev, found, err := e.Mounter.Find(ctx, bundle.Label)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("no filesystem labelled %s", bundle.Label)
		}
		if err := os.MkdirAll(e.MountDir, 0o700); err != nil {
			return err
		}
		return e.Mounter.Mount(ctx, dev, e.MountDir)
	case StepVerify:
		m, err := bundle.Open(e.MountDir, r.plan.BundleSHA)
		if err != nil {
			return err
		}
		if err := CheckBundle(r.plan.Target, m.Version()); err != nil {
			return err
		}
		r.manifest = &m
		return nil
	case StepKubeadm:
		return r.install(ctx, "bin/kubeadm")
	case StepImages:
		for _, img := range r.manifest.Images() {
			if err := r.run(ctx, importTimeout, system.Cmd{Name: "ctr", Args: []string{"-n", "k8s.io", "images", "import", filepath.Join(e.MountDir, img)}}); err != nil {
				return err
			}
		}
		return nil
	case StepUpgrade:
		c := system.Cmd{Name: filepath.Join(e.BinDir, "kubeadm"), Args: []string{"upgrade", "node"}, Scrub: true}
		if r.mode == ModeApply {
			// --certificate-renewal is kubeadm's default; said explicitly
			// because the renewal is part of why upgrades keep a cluster
			// alive (docs/certificates.md).
			c.Args = []string{"upgrade", "apply", "-y", r.plan.Target.String(), "--certificate-renewal=true"}
		}
		if len(e.IgnorePreflight) > 0 {
			c.Args = append(c.Args, "--ignore-preflight-errors="+strings.Join(e.IgnorePreflight, ","))
		}
		return r.run(ctx, kubeadmTimeout, c)
	case StepKubelet:
		for _, b := range []string{"bin/kubectl", "bin/kubelet"} {
			if err := r.install(ctx, b); err != nil {
				return err
			}
		}
		if err := r.run(ctx, systemdTimeout, system.Cmd{Name: "systemctl", Args: []string{"daemon-reload"}}); err != nil {
			return err
		}
		return r.run(ctx, systemdTimeout, system.Cmd{Name: "systemctl", Args: []string{"restart", "kubelet"}})
	case StepDetach:
		if err := e.Mounter.Unmount(ctx, e.MountDir); err != nil {
			return err
		}
		err := e.Disks.Detach(ctx, r.plan.BundleImage)
		if errors.Is(err, ErrLeftAttached) {
			// Not a failure: the node is upgraded, and an unmounted
			// read-only disk harms nothing. Said, for the owner.
			r.note = err.Error()
			return nil
		}
		return err
	case StepDone:
		return nil
	}
	return fmt.Errorf("unknown step %q", step)
}

// attach hot-plugs the bundle unless a disk with its label is already
// there (a resumed run), then waits for the label to show.
func (r *nodeRun) attach(ctx context.Context) error {
	e := r.e
	if _, found, err := e.Mounter.Find(ctx, bundle.Label); err != nil || found {
		return err
	}
	if err := e.Disks.Attach(ctx, r.plan.BundleImage); err != nil {
		return fmt.Errorf("attaching image %d: %w", r.plan.BundleImage, err)
	}
	deadline := e.Clock.Now().Add(e.AttachWait)
	for {
		if _, found, err := e.Mounter.Find(ctx, bundle.Label); err != nil || found {
			return err
		}
		if !e.Clock.Now().Before(deadline) {
			return fmt.Errorf("image %d attached, but no filesystem labelled %s showed within %s", r.plan.BundleImage, bundle.Label, e.AttachWait)
		}
		if err := e.Clock.Sleep(ctx, attachPoll); err != nil {
			return err
		}
	}
}

// install copies a verified binary next to its destination, checks the
// copy's sha256 against the manifest (the mount is not trusted to stay
// what was verified), and renames it into place.
func (r *nodeRun) install(_ context.Context, name string) error {
	e := r.e
	want := r.manifest.Files[name]
	src, err := os.Open(filepath.Join(e.MountDir, name))
	if err != nil {
		return err
	}
	defer src.Close()
	dst := filepath.Join(e.BinDir, filepath.Base(name))
	tmp, err := os.CreateTemp(e.BinDir, "."+filepath.Base(name)+".onekube-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(tmp, h), src); err != nil {
		tmp.Close()
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		tmp.Close()
		return fmt.Errorf("%s changed after verification (sha256 %s, manifest %s)", name, got, want)
	}
	if err := tmp.Chmod(0o755); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dst)
}

func (r *nodeRun) run(ctx context.Context, timeout time.Duration, c system.Cmd) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	_, err := r.e.Exec.Run(ctx, c)
	return err
}

// brief is an error short enough for an annotation and a OneGate value.
func brief(err error) string {
	var ee *system.ExitError
	msg := err.Error()
	if errors.As(err, &ee) {
		msg = ee.Brief()
	}
	if len(msg) > 200 {
		msg = strings.ToValidUTF8(msg[:200], "")
	}
	return msg
}
