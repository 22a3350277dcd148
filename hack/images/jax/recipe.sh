# shellcheck shell=bash disable=SC2034  # sourced by hack/lib/images.sh
# The JAX image: the wheels image with JAX for CPU from PyPI (requirements.txt: jax[cpu] 0.10.2 and
# its dependencies, each pinned with its wheel's hash) and the jax-psum program
# (/usr/local/bin/jax-psum, jax_psum.py here): jax.distributed.initialize from a JAXJob pod's
# environment, then a psum across every process.
IMAGE_BASE=wheels
IMAGE_PIP=requirements.txt
IMAGE_FILES="jax/jax_psum.py:/usr/local/bin/jax-psum:0755"
IMAGE_ENTRYPOINT='["/usr/local/bin/jax-psum"]'
IMAGE_ENV="LANG=C.UTF-8 PYTHONUNBUFFERED=1"
