# The onekube appliance, built the way one-apps builds service appliances:
# boot a one-context Debian image with a context CD that opens SSH for the
# build, install one-apps' service driver with our service.d/appliance.sh,
# run `service install`, then seal the image.

# Step 1: the context CD for the build VM (one-context reads it at boot).
source "null" "context" {
  communicator = "none"
}

build {
  sources = ["source.null.context"]

  provisioner "shell-local" {
    environment_vars = ["ONEKUBE_BUILD_PASSWORD=${var.ssh_password}"]
    inline = [
      "mkdir -p ${var.output_dir}/context",
      "${var.input_dir}/gen_context > ${var.output_dir}/context/context.sh",
      "genisoimage -quiet -o ${var.output_dir}/context.iso -V CONTEXT -J -R ${var.output_dir}/context",
    ]
  }
}

# Step 2: the image itself.
source "qemu" "onekube" {
  accelerator = "kvm"
  cpus        = 2
  memory      = 4096

  iso_url      = var.base_image
  iso_checksum = var.base_image_checksum
  disk_image   = true
  disk_size    = var.disk_size
  format       = "qcow2"

  disk_interface = "virtio"
  net_device     = "virtio-net"
  headless       = var.headless

  qemuargs = [
    ["-cpu", "host"],
    ["-cdrom", "${var.output_dir}/context.iso"],
  ]

  communicator     = "ssh"
  ssh_username     = "root"
  ssh_password     = var.ssh_password
  ssh_timeout      = "15m"
  shutdown_command = "poweroff"

  output_directory = "${var.output_dir}/image"
  vm_name          = var.appliance_name
}

build {
  sources = ["source.qemu.onekube"]

  provisioner "shell" {
    inline = [
      "install -o 0 -g 0 -m 0750 -d /etc/one-appliance /etc/one-appliance/service.d /etc/one-appliance/lib",
      "install -o 0 -g 0 -m 0755 -d /opt/one-appliance",
    ]
  }

  # one-apps' driver and its libraries, from the one-apps checkout.
  provisioner "file" {
    source      = "${var.one_apps_dir}/appliances/service.sh"
    destination = "/etc/one-appliance/service"
  }
  provisioner "file" {
    sources     = ["${var.one_apps_dir}/appliances/lib/common.sh", "${var.one_apps_dir}/appliances/lib/functions.sh"]
    destination = "/etc/one-appliance/lib/"
  }
  # The hook that makes one-context run `service configure && service
  # bootstrap` at boot. one-apps' READY hook is deliberately not installed:
  # onekube-agent reports READY itself, after kubeadm.
  provisioner "file" {
    source      = "${var.one_apps_dir}/appliances/scripts/net-90-service-appliance"
    destination = "/etc/one-context.d/net-90-service-appliance"
  }
  provisioner "file" {
    source      = "${var.input_dir}/../appliance.sh"
    destination = "/etc/one-appliance/service.d/appliance.sh"
  }
  provisioner "file" {
    source      = var.onekube_deb
    destination = "/tmp/onekube.deb"
  }

  provisioner "shell" {
    environment_vars = [
      "ONEKUBE_K8S_VERSION=${var.k8s_version}",
      "ONEKUBE_CONTAINERD_VERSION=${var.containerd_version}",
      "ONEKUBE_RUNC_VERSION=${var.runc_version}",
      "ONEKUBE_FLANNEL_VERSION=${var.flannel_version}",
      "ONEKUBE_CALICO_VERSION=${var.calico_version}",
      "ONEKUBE_DEB=/tmp/onekube.deb",
    ]
    inline = [
      "chmod 0750 /etc/one-appliance/service /etc/one-context.d/net-90-service-appliance",
      "/etc/one-appliance/service install",
      "sync",
    ]
  }

  # Seal, second half (onekube_seal in appliance.sh did the first: hostname,
  # machine-id, host keys, the password-login sshd drop-in): the build
  # password, and what the shutdown left, such as logs and the random seed.
  post-processor "shell-local" {
    environment_vars = ["IMAGE=${var.output_dir}/image/${var.appliance_name}"]
    inline = [
      "virt-sysprep --add \"$IMAGE\" --operations defaults,-ssh-userdir --root-password disabled --truncate /etc/machine-id",
      "virt-sparsify --in-place \"$IMAGE\"",
    ]
  }
}
