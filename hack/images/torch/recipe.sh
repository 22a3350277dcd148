# shellcheck shell=bash disable=SC2034  # sourced by hack/lib/images.sh
# The PyTorch image: the wheels image with PyTorch for CPU from PyPI (requirements.txt: torch
# 2.15.0 and the dependencies it needs on CPU, each pinned with its wheel's hash, installed with
# --no-deps; cuda_stubs.py then compiles stand-ins for the NVIDIA libraries the wheel links to,
# which are not installed) and the PyTorchJob guide's trainer at the path
# examples/pytorch-simple.yaml runs, /opt/pytorch-mnist/mnist.py (mnist.py here:
# DistributedDataParallel over gloo on generated MNIST-shaped data), and beside it elastic.py, the
# worker an elastic PyTorchJob runs under torchrun (python3 -m torch.distributed.run), resuming
# across rendezvous rounds as workers come and go.
IMAGE_BASE=wheels
IMAGE_PIP=requirements.txt
IMAGE_PIP_ARGS=--no-deps
IMAGE_PIP_HOOK=torch/cuda_stubs.py
IMAGE_FILES="torch/mnist.py:/opt/pytorch-mnist/mnist.py:0755 torch/elastic.py:/opt/pytorch-mnist/elastic.py:0755"
IMAGE_CMD='["python3", "/opt/pytorch-mnist/mnist.py"]'
IMAGE_ENV="LANG=C.UTF-8 PYTHONUNBUFFERED=1"
