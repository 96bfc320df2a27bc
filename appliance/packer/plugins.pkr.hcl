# Plugin pins for Packer >= 1.7 (`packer init`). Packer 1.6 (Debian 12's,
# used by `make appliance-check` to validate the recipe) bundles the qemu
# builder and does not know this block, so the check leaves this file out.
packer {
  required_version = ">= 1.7.0"
  required_plugins {
    qemu = {
      source  = "github.com/hashicorp/qemu"
      version = "~> 1.1"
    }
  }
}
