# Inputs of the onekube appliance build. appliance/build.sh sets them from
# appliance/versions.env and its own arguments; nothing is pinned here, so a
# forgotten input fails the build instead of silently taking a stale default.

variable "k8s_version" {
  type        = string
  description = "Kubernetes version of kubeadm, kubelet, kubectl and the pre-pulled images (MAJOR.MINOR.PATCH)"
}

variable "containerd_version" {
  type        = string
  description = "containerd release (upstream static binaries)"
}

variable "runc_version" {
  type        = string
  description = "runc release (upstream static binary)"
}

variable "flannel_version" {
  type        = string
  description = "flannel release whose kube-flannel.yml becomes /usr/share/onekube/cni/flannel.yaml"
}

variable "calico_version" {
  type        = string
  description = "Calico release whose manifests/calico.yaml becomes /usr/share/onekube/cni/calico.yaml"
}

variable "onekube_deb" {
  type        = string
  description = "path of the onekube .deb built by `make package`"
}

variable "one_apps_dir" {
  type        = string
  description = "checkout of OpenNebula/one-apps providing the service-appliance driver (appliances/service.sh, appliances/lib/)"
}

variable "base_image" {
  type        = string
  description = "Debian qcow2 with one-context installed, e.g. one-apps' export/debian12.qcow2"
}

variable "base_image_checksum" {
  type        = string
  default     = "none"
  description = "checksum of base_image in Packer's type:value form, or none for a local file"
}

variable "ssh_password" {
  type        = string
  description = "root password of the build VM only (set through the context CD, removed before export)"
}

variable "input_dir" {
  type        = string
  description = "this directory (appliance/packer)"
}

variable "output_dir" {
  type        = string
  description = "where the built qcow2 is written"
}

variable "appliance_name" {
  type        = string
  default     = "onekube"
  description = "name of the output image file"
}

variable "headless" {
  type    = bool
  default = true
}

variable "disk_size" {
  type        = string
  default     = "8G"
  description = "disk of the image: Kubernetes images and containerd need room"
}
