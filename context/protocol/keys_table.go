package protocol

// Keys is docs/trust.md's table, row for row (TestTrustTableMatchesDocs).
// A new OneGate key gets a row in both before any code reads it.
var Keys = []Key{
	{Name: "`VM ID`", Writer: "oned (the caller's token)", Readers: "agent, onekubed", Trust: Vouched, ForgerGet: "nothing", Status: Held},
	{Name: "`STATE`, `LCM_STATE`", Writer: "oned", Readers: "agent, onekubed, flow status", Trust: Vouched, ForgerGet: "nothing", Status: Held},
	{Name: "`NIC addresses`", Writer: "oned", Readers: "agent (master address check), onekubed", Trust: Vouched, ForgerGet: "nothing", Status: Held},
	{Name: "`STIME`", Writer: "oned (at allocation; a recreate keeps it)", Readers: "agent (the initialising master's first-deployment check)", Trust: Vouched, ForgerGet: "nothing", Status: Held},
	{Name: "`roles[].nodes`", Writer: "OneFlow", Readers: "agent (its own role, master discovery), flow status", Trust: Vouched, ForgerGet: "nothing", Status: Held},
	{Name: "`ROLE_NAME`", Writer: "oned at instantiate; any VM after", Readers: "agent (compared with the service document)", Trust: ClaimTrust, ForgerGet: "a log line: the role and node name come from `roles[].nodes`", Status: Held},
	{Name: "`SERVICE_ID`", Writer: "oned at instantiate; any VM after", Readers: "OneGate (which service), agent (checked against the service document)", Trust: ClaimTrust, ForgerGet: "OneGate's reads and writes in another service of the same owner; the agent acts only in a service that lists it", Status: Held},
	{Name: "`ONEKUBE_MASTER_VM_ID`", Writer: "owner (CONTEXT, from `${master.vm.id}`)", Readers: "straight workers", Trust: Owner, ForgerGet: "a stale or hand-edited hint; checked against the master role", Status: Held},
	{Name: "`ONEKUBE_KUBECONFIG_USERS`", Writer: "owner (CONTEXT of the masters)", Readers: "onekubed, onekube-flow", Trust: Owner, ForgerGet: "nothing: read from the master's own CONTEXT; each entry caps its role (`name:key[:maxrole]`, view by default)", Status: Held},
	{Name: "`ONEGATE_K8S_MASTER`", Writer: "the initializing master", Readers: "workers, flow status", Trust: ClaimTrust, ForgerGet: "nothing: a worker accepts only an address among that VM's own NICs", Status: Held},
	{Name: "`ONEGATE_K8S_PORT`", Writer: "the initializing master", Readers: "workers, flow status", Trust: ClaimTrust, ForgerGet: "a failed join", Status: Held},
	{Name: "`ONEGATE_K8S_TOKEN`", Writer: "masters (bootstrap, serve)", Readers: "workers, joining masters", Trust: ClaimTrust, ForgerGet: "a failed join (a rewritten token); reading it, while a RUNNING VM has no Node, gives a worker-group token (no kubeadm-certs) and a node credential under a name of its choosing (residual risk below)", Status: Held},
	{Name: "`ONEGATE_K8S_HASH`", Writer: "the initializing master", Readers: "workers", Trust: ClaimTrust, ForgerGet: "a redirected join where NICs can be spoofed (the CA pin is a claim)", Status: Open},
	{Name: "`ONEGATE_K8S_TOKEN_EXPIRES`", Writer: "masters (serve)", Readers: "workers", Trust: ClaimTrust, ForgerGet: "a join not started, or started with a dying token", Status: Held},
	{Name: "`ONEGATE_K8S_ETA`", Writer: "masters", Readers: "workers (poll pacing)", Trust: ClaimTrust, ForgerGet: "at most a minute between polls", Status: Held},
	{Name: "`ONEGATE_K8S_PHASE`", Writer: "every VM (its own)", Readers: "onekubed (may only withhold a token), workers, flow status", Trust: ClaimTrust, ForgerGet: "nothing minted: serve mints only for a RUNNING VM with no live Node (provider ID); a forged phase can at most withhold a token", Status: Held},
	{Name: "`ONEGATE_K8S_ERROR`", Writer: "every VM (its own)", Readers: "workers (a failed master), flow status", Trust: ClaimTrust, ForgerGet: "a worker that stops waiting", Status: Held},
	{Name: "`READY`", Writer: "every VM (its own)", Readers: "OneFlow, workers, flow status, onekubed (may only withhold a token)", Trust: ClaimTrust, ForgerGet: "OneFlow deploys the children early; workers treat the VM as done", Status: Held},
	{Name: "`ONEGATE_K8S_NODE_NAME`", Writer: "every VM (its own)", Readers: "onekubed leave, flow status", Trust: ClaimTrust, ForgerGet: "a wrong name in status", Status: Held},
	{Name: "`ONEGATE_K8S_KIND`, `ONEGATE_K8S_ENDPOINT`", Writer: "masters", Readers: "agent, flow status", Trust: ClaimTrust, ForgerGet: "a wrong line in status", Status: Held},
	{Name: "`ONEGATE_K8S_CP_RECIPIENT`", Writer: "a joining master", Readers: "the acting master (a request: the grant is sealed to the recipient the joiner serves at its NIC address)", Trust: ClaimTrust, ForgerGet: "a join that waits; the certificate key only by spoofing the joiner's address where no spoofing filter runs", Status: Held},
	{Name: "`ONEGATE_K8S_CERT_KEY`", Writer: "the acting master", Readers: "the joining master", Trust: ClaimTrust, ForgerGet: "a failed control-plane join (the grant is sealed)", Status: Held},
	{Name: "`ONEGATE_K8S_SERVE`, `_SERVE_ERROR`, `_WAITING`, `_GIVEN_UP`, `_NODES_WITHOUT_VM`", Writer: "masters (serve)", Readers: "flow status, onekube-agent status", Trust: ClaimTrust, ForgerGet: "a wrong line in status (values are masked and bounded)", Status: Held},
	{Name: "`ONEGATE_K8S_CERTS`, `_CERTS_ERROR`", Writer: "masters (serve, each its own)", Readers: "flow status, onekube-agent status", Trust: ClaimTrust, ForgerGet: "a wrong line in status (values are bounded)", Status: Held},
	{Name: "`ONEGATE_K8S_EXPOSURE`", Writer: "masters (a probe of their own template)", Readers: "flow status", Trust: ClaimTrust, ForgerGet: "a wrong line in status", Status: Held},
	{Name: "`ONEGATE_K8S_ETCD`, `_ETCD_ERROR`", Writer: "the acting master", Readers: "flow status", Trust: ClaimTrust, ForgerGet: "a wrong line in status", Status: Held},
	{Name: "`ONEKUBE_KUBECONFIG_REQ_*`", Writer: "the user's onekube-flow (any VM can write or rewrite one)", Readers: "onekubed", Trust: ClaimTrust, ForgerGet: "a challenge sealed to a listed user; nothing bound or signed without that user's proof over every field", Status: Held},
	{Name: "`ONEKUBE_KUBECONFIG_ANS_*`", Writer: "the master asked", Readers: "onekube-flow", Trust: ClaimTrust, ForgerGet: "nothing: the CLI checks the challenge against its request, and the credential against its request (name, role, validity) and the API server", Status: Held},
}
