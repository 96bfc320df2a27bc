package serve

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// A running cluster's remediation is paused by an annotation on the
// ConfigMap kube-system/onekube-remediation:
//
//	kubectl -n kube-system create configmap onekube-remediation
//	kubectl -n kube-system annotate configmap onekube-remediation onekube.io/remediation-paused=true
//
// Why there and not in OneGate: every VM of the service can write any
// VM's USER_TEMPLATE (docs/trust.md), so a key there is anyone's; CONTEXT
// is the owner's but changes only with the VM powered off. Writing a
// ConfigMap in kube-system takes a Kubernetes credential with that right:
// admin.conf, or a user the owner granted edit, admin or cluster-admin
// (ONEKUBE_KUBECONFIG_USERS). A kubelet cannot (the Node authorizer gives
// nodes no ConfigMap writes), nor can anything holding only a OneGate
// token.
const (
	PauseConfigMap  = "onekube-remediation"
	AnnotationPause = "onekube.io/remediation-paused"
)

// pausedBy reads the pause: "" when remediation may act, else why not.
// A missing ConfigMap or annotation, or the values false/no/off/0, leave
// it running; any other value pauses it, so a typo errs on the side of
// doing nothing.
func pausedBy(ctx context.Context, cs kubernetes.Interface) (string, error) {
	cm, err := cs.CoreV1().ConfigMaps(LeaseNamespace).Get(ctx, PauseConfigMap, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading the pause switch %s/%s: %w", LeaseNamespace, PauseConfigMap, err)
	}
	v, ok := cm.Annotations[AnnotationPause]
	if !ok {
		return "", nil
	}
	return pauseValue(v), nil
}

// pauseValue reads the annotation's value: "" for running, else why.
func pauseValue(v string) string {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "false", "no", "off", "0":
		return ""
	}
	return fmt.Sprintf("paused by the annotation %s on ConfigMap %s/%s", AnnotationPause, LeaseNamespace, PauseConfigMap)
}
