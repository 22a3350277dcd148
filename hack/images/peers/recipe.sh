# shellcheck shell=bash disable=SC2034  # sourced by hack/lib/images.sh
# The peers image: Python 3 and the peers program (/usr/local/bin/peers, peers.py here), which
# checks a TFJob's or PyTorchJob's wiring over the pod network, and nslookup (bind9-dnsutils)
# for the PyTorchJob workers' init container (the controller's --pytorch-init-container-image).
IMAGE_PACKAGES="netbase python3 bind9-dnsutils"
IMAGE_FILES="peers/peers.py:/usr/local/bin/peers:0755"
IMAGE_ENTRYPOINT='["/usr/local/bin/peers"]'
IMAGE_ENV="LANG=C.UTF-8 PYTHONUNBUFFERED=1"
