package fleet

import (
	"time"

	"github.com/onekube/onekube/flow"
)

// Result is one run, in virtual time unless said otherwise.
type Result struct {
	Workers    int
	Joined     int // workers whose agent ran `kubeadm join` and succeeded
	Deployment string
	Model      Model
	G          time.Duration // OneFlow's delay drawn for this run (straight)
	// TimeToReady is instantiate -> the last agent done (its READY=YES
	// published after its join).
	TimeToReady time.Duration
	// PublishToLastJoin is the master's publish (its last PUT with
	// READY=YES) -> the latest worker's `kubeadm join` start.
	PublishToLastJoin time.Duration
	// Per joining worker: OneGate requests and response body bytes, and
	// the part of both that is GET /service (discovery).
	ReqPerWorker, BytesPerWorker              float64
	DiscoveryReqPerWorker, DiscoveryPerWorker float64
	MaxReqPerWorker                           int
	// OneGate load from every VM: the busiest 1-second bucket, and the
	// mean over first to last request.
	PeakRPS       int
	MeanRPS       float64
	TotalRequests int
	Routes        map[string]int // workers' requests by route, summed
	Timeline      []Entry
	Real          time.Duration // wall time of the run
}

// Ratio is time to ready over the physical limit.
func (r Result) Ratio() float64 { return r.TimeToReady.Seconds() / r.Model.Limit().Seconds() }

// LegacyRatio is the legacy straight flow's model over the limit.
func (r Result) LegacyRatio() float64 { return r.Model.Legacy().Seconds() / r.Model.Limit().Seconds() }

// discoveryRoute is the request every VM makes to learn the service.
const discoveryRoute = "GET /service"

func (f *fleet) result() *Result {
	f.mu.Lock()
	defer f.mu.Unlock()
	res := &Result{Workers: f.cfg.Workers, Deployment: f.cfg.Deployment, Model: f.cfg.Model, Routes: map[string]int{}}
	if f.cfg.Deployment == Straight {
		res.G = f.g
	}
	var lastJoin time.Time
	for _, v := range f.vms {
		res.TimeToReady = max(res.TimeToReady, v.finished.Sub(f.t0))
		if v.info.Role == flow.RoleWorker && !v.joinStart.IsZero() && v.err == nil {
			res.Joined++
		}
		if v.joinStart.After(lastJoin) {
			lastJoin = v.joinStart
		}
	}
	if !lastJoin.IsZero() && !f.published.IsZero() {
		res.PublishToLastJoin = lastJoin.Sub(f.published)
	}

	perVM := map[int]int{}
	buckets := map[int64]int{}
	var first, last time.Time
	var bytes, disc, discBytes int
	for i, r := range f.requests {
		if i == 0 || r.at.Before(first) {
			first = r.at
		}
		if r.at.After(last) {
			last = r.at
		}
		buckets[int64(r.at.Sub(f.t0)/time.Second)]++
		if v := f.vms[r.vm]; v == nil || v.info.Role != flow.RoleWorker {
			continue
		}
		perVM[r.vm]++
		res.Routes[r.route]++
		bytes += r.bytes
		if r.route == discoveryRoute {
			disc++
			discBytes += r.bytes
		}
	}
	res.TotalRequests = len(f.requests)
	for _, n := range buckets {
		res.PeakRPS = max(res.PeakRPS, n)
	}
	for _, n := range perVM {
		res.MaxReqPerWorker = max(res.MaxReqPerWorker, n)
	}
	if span := last.Sub(first).Seconds(); span > 0 {
		res.MeanRPS = float64(len(f.requests)) / span
	}
	n := float64(f.cfg.Workers)
	workerReqs := 0
	for _, c := range perVM {
		workerReqs += c
	}
	res.ReqPerWorker = float64(workerReqs) / n
	res.BytesPerWorker = float64(bytes) / n
	res.DiscoveryReqPerWorker = float64(disc) / n
	res.DiscoveryPerWorker = float64(discBytes) / n
	res.Timeline = f.sortedTimeline()
	return res
}
