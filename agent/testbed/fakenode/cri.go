package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	cri "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The CRI answers kubeadm needs (reference real-kubeadm-testbed.md §3, §6):
// the cri-client checks Version and ImageFsInfo when it connects, preflight
// wants RuntimeReady and the sandbox image kubeadm expects, ImagePull asks
// ImageStatus, and reset lists, stops and removes sandboxes. Everything else
// answers Unimplemented, as a runtime lacking a feature would.

// sandboxImage is what containerd 2.x reports for Kubernetes 1.37; kubeadm
// warns when it differs from its own pause image (constants.PauseVersion).
const sandboxImage = "registry.k8s.io/pause:3.10.2"

type criServer struct {
	cri.UnimplementedRuntimeServiceServer
	cri.UnimplementedImageServiceServer
	rt *containerRuntime
}

// serveCRI listens on the socket (removing a stale one, as containerd does)
// and serves until the listener closes.
func serveCRI(socket string, rt *containerRuntime) (*grpc.Server, error) {
	if err := os.MkdirAll(filepath.Dir(socket), 0o711); err != nil {
		return nil, err
	}
	_ = os.Remove(socket)
	ln, err := net.Listen("unix", socket)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", socket, err)
	}
	srv := grpc.NewServer()
	s := &criServer{rt: rt}
	cri.RegisterRuntimeServiceServer(srv, s)
	cri.RegisterImageServiceServer(srv, s)
	go func() { _ = srv.Serve(ln) }()
	return srv, nil
}

func (s *criServer) Version(context.Context, *cri.VersionRequest) (*cri.VersionResponse, error) {
	return &cri.VersionResponse{Version: "0.1.0", RuntimeName: "fakenode", RuntimeVersion: "v1.37.2-testbed", RuntimeApiVersion: "v1"}, nil
}

func (s *criServer) Status(context.Context, *cri.StatusRequest) (*cri.StatusResponse, error) {
	return &cri.StatusResponse{
		Status: &cri.RuntimeStatus{Conditions: []*cri.RuntimeCondition{
			{Type: cri.RuntimeReady, Status: true},
			{Type: cri.NetworkReady, Status: true},
		}},
		Info: map[string]string{"config": fmt.Sprintf(`{"sandboxImage":%q}`, sandboxImage)},
	}, nil
}

func (s *criServer) RuntimeConfig(context.Context, *cri.RuntimeConfigRequest) (*cri.RuntimeConfigResponse, error) {
	return &cri.RuntimeConfigResponse{Linux: &cri.LinuxRuntimeConfiguration{CgroupDriver: cri.CgroupDriver_SYSTEMD}}, nil
}

func (s *criServer) ListPodSandbox(_ context.Context, req *cri.ListPodSandboxRequest) (*cri.ListPodSandboxResponse, error) {
	var items []*cri.PodSandbox
	for _, sb := range s.rt.list() {
		if f := req.GetFilter(); f != nil && f.GetId() != "" && f.GetId() != sb.id {
			continue
		}
		items = append(items, &cri.PodSandbox{
			Id: sb.id, Metadata: sandboxMeta(sb), State: sandboxState(s.rt, sb), CreatedAt: sb.created.UnixNano(),
		})
	}
	return &cri.ListPodSandboxResponse{Items: items}, nil
}

func (s *criServer) PodSandboxStatus(_ context.Context, req *cri.PodSandboxStatusRequest) (*cri.PodSandboxStatusResponse, error) {
	sb := s.sandbox(req.GetPodSandboxId())
	if sb == nil {
		return nil, status.Errorf(codes.NotFound, "sandbox %s not found", req.GetPodSandboxId())
	}
	return &cri.PodSandboxStatusResponse{Status: &cri.PodSandboxStatus{
		Id: sb.id, Metadata: sandboxMeta(sb), State: sandboxState(s.rt, sb), CreatedAt: sb.created.UnixNano(),
	}}, nil
}

// StopPodSandbox kills the sandbox's containers at once: the CRI says
// running containers "must be forcibly terminated" (cri-api api.proto),
// and containerd stops each with a timeout of 0 (its cri server's
// stopPodSandbox). A grace period here made kubeadm reset's 2 s calls time
// out and retry for ~9 s on a control plane.
func (s *criServer) StopPodSandbox(_ context.Context, req *cri.StopPodSandboxRequest) (*cri.StopPodSandboxResponse, error) {
	if sb := s.sandbox(req.GetPodSandboxId()); sb != nil {
		s.rt.stop(sb, 0)
	}
	return &cri.StopPodSandboxResponse{}, nil // idempotent, as the CRI requires
}

func (s *criServer) RemovePodSandbox(_ context.Context, req *cri.RemovePodSandboxRequest) (*cri.RemovePodSandboxResponse, error) {
	if sb := s.sandbox(req.GetPodSandboxId()); sb != nil {
		s.rt.stop(sb, 0)
		s.rt.remove(sb.id)
	}
	return &cri.RemovePodSandboxResponse{}, nil
}

func (s *criServer) ListContainers(_ context.Context, req *cri.ListContainersRequest) (*cri.ListContainersResponse, error) {
	var out []*cri.Container
	for _, sb := range s.rt.list() {
		if f := req.GetFilter(); f != nil && f.GetPodSandboxId() != "" && f.GetPodSandboxId() != sb.id {
			continue
		}
		for _, c := range sb.containers {
			snap := s.rt.snapshot(c)
			out = append(out, &cri.Container{
				Id: snap.id, PodSandboxId: sb.id,
				Metadata: &cri.ContainerMetadata{Name: snap.name, Attempt: uint32(snap.attempt)}, //nolint:gosec // small
				Image:    &cri.ImageSpec{Image: imageOf(sb, snap.name)},
				State:    containerState(snap), CreatedAt: snap.started.UnixNano(),
			})
		}
	}
	return &cri.ListContainersResponse{Containers: out}, nil
}

func (s *criServer) ContainerStatus(_ context.Context, req *cri.ContainerStatusRequest) (*cri.ContainerStatusResponse, error) {
	for _, sb := range s.rt.list() {
		for _, c := range sb.containers {
			if c.id != req.GetContainerId() {
				continue
			}
			snap := s.rt.snapshot(c)
			st := &cri.ContainerStatus{
				Id: snap.id, Metadata: &cri.ContainerMetadata{Name: snap.name, Attempt: uint32(snap.attempt)}, //nolint:gosec // small
				State: containerState(snap), CreatedAt: snap.started.UnixNano(), StartedAt: snap.started.UnixNano(),
				Image: &cri.ImageSpec{Image: imageOf(sb, snap.name)}, LogPath: snap.logPath,
			}
			if !snap.running {
				st.FinishedAt, st.ExitCode = snap.finished.UnixNano(), int32(snap.exitCode) //nolint:gosec // exit codes are small
			}
			return &cri.ContainerStatusResponse{Status: st}, nil
		}
	}
	return nil, status.Errorf(codes.NotFound, "container %s not found", req.GetContainerId())
}

func (s *criServer) StopContainer(_ context.Context, req *cri.StopContainerRequest) (*cri.StopContainerResponse, error) {
	// Containers are stopped with their sandbox; a lone stop is what reset
	// sends before StopPodSandbox, so doing the whole pod is equivalent.
	for _, sb := range s.rt.list() {
		for _, c := range sb.containers {
			if c.id == req.GetContainerId() {
				s.rt.stop(sb, time.Duration(req.GetTimeout())*time.Second)
			}
		}
	}
	return &cri.StopContainerResponse{}, nil
}

func (s *criServer) RemoveContainer(context.Context, *cri.RemoveContainerRequest) (*cri.RemoveContainerResponse, error) {
	return &cri.RemoveContainerResponse{}, nil
}

// The image calls answer from the node's image store: an image is there
// when the bed preloaded it (the appliance's images of its release) or ctr
// imported it. The bed has no registry and no network out, so a pull of an
// absent image fails, as it does on an air-gapped node.
func (s *criServer) ImageStatus(_ context.Context, req *cri.ImageStatusRequest) (*cri.ImageStatusResponse, error) {
	m, ok := s.rt.images.lookup(req.GetImage().GetImage())
	if !ok {
		return &cri.ImageStatusResponse{}, nil // the CRI's "not present"
	}
	return &cri.ImageStatusResponse{Image: criImage(m)}, nil
}

func (s *criServer) PullImage(_ context.Context, req *cri.PullImageRequest) (*cri.PullImageResponse, error) {
	ref := req.GetImage().GetImage()
	if m, ok := s.rt.images.lookup(ref); ok {
		return &cri.PullImageResponse{ImageRef: m.ID}, nil
	}
	host, _, _ := strings.Cut(ref, "/")
	return nil, status.Errorf(codes.Unknown, "failed to pull and unpack image %q: failed to resolve reference %q: dial tcp: lookup %s: no such host", ref, ref, host)
}

func (s *criServer) ListImages(context.Context, *cri.ListImagesRequest) (*cri.ListImagesResponse, error) {
	var out []*cri.Image
	for _, m := range s.rt.images.list() {
		out = append(out, criImage(m))
	}
	return &cri.ListImagesResponse{Images: out}, nil
}

func (s *criServer) RemoveImage(_ context.Context, req *cri.RemoveImageRequest) (*cri.RemoveImageResponse, error) {
	_ = s.rt.images.remove(req.GetImage().GetImage()) // idempotent, as the CRI requires
	return &cri.RemoveImageResponse{}, nil
}

func criImage(m imageMeta) *cri.Image {
	return &cri.Image{Id: m.ID, RepoTags: []string{m.Ref}, Size: m.Size}
}

func (s *criServer) ImageFsInfo(context.Context, *cri.ImageFsInfoRequest) (*cri.ImageFsInfoResponse, error) {
	fs := &cri.FilesystemUsage{
		Timestamp: time.Now().UnixNano(),
		FsId:      &cri.FilesystemIdentifier{Mountpoint: "/var/lib/containerd"},
		UsedBytes: &cri.UInt64Value{Value: 1 << 20}, InodesUsed: &cri.UInt64Value{Value: 100},
	}
	return &cri.ImageFsInfoResponse{ImageFilesystems: []*cri.FilesystemUsage{fs}}, nil
}

func (s *criServer) sandbox(id string) *sandbox {
	for _, sb := range s.rt.list() {
		if sb.id == id {
			return sb
		}
	}
	return nil
}

func sandboxMeta(sb *sandbox) *cri.PodSandboxMetadata {
	return &cri.PodSandboxMetadata{Name: sb.pod.Name, Namespace: sb.pod.Namespace, Uid: string(sb.pod.UID)}
}

func sandboxState(rt *containerRuntime, sb *sandbox) cri.PodSandboxState {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if sb.ready {
		return cri.PodSandboxState_SANDBOX_READY
	}
	return cri.PodSandboxState_SANDBOX_NOTREADY
}

func containerState(c container) cri.ContainerState {
	if c.running {
		return cri.ContainerState_CONTAINER_RUNNING
	}
	return cri.ContainerState_CONTAINER_EXITED
}

func imageOf(sb *sandbox, name string) string {
	for _, c := range sb.pod.Spec.Containers {
		if c.Name == name {
			return c.Image
		}
	}
	return ""
}
