# shellcheck shell=bash disable=SC2034  # sourced by hack/lib/images.sh
# kubectl-delivery: copies kubectl into the launcher's /opt/kube volume and waits for the
# workers listed in /etc/mpi/hostfile to be Running and Ready (MPIJob v1's kubectl-exec mode).
IMAGE_VARIANT=essential
IMAGE_PACKAGES=""
IMAGE_FILES="kubectl:/usr/bin/kubectl:0755 kubectl-delivery/kubectl-delivery.sh:/usr/bin/kubectl-delivery:0755"
IMAGE_ENTRYPOINT='["/bin/sh", "-c"]'
IMAGE_CMD='["cp /bin/kubectl /opt/kube/kubectl && exec /bin/kubectl-delivery"]'
