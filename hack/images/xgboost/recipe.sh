# shellcheck shell=bash disable=SC2034  # sourced by hack/lib/images.sh
# The XGBoost image: the wheels image with XGBoost for CPU from PyPI (requirements.txt: xgboost-cpu
# 3.2.0, the wheel without the CUDA/NCCL parts, and its dependencies, each pinned with its wheel's
# hash) and the xgboost-train program (/usr/local/bin/xgboost-train, xgboost_train.py here): a few
# boosting rounds with XGBoost's tracker and collective across an XGBoostJob's pods.
IMAGE_BASE=wheels
IMAGE_PIP=requirements.txt
IMAGE_FILES="xgboost/xgboost_train.py:/usr/local/bin/xgboost-train:0755"
IMAGE_ENTRYPOINT='["/usr/local/bin/xgboost-train"]'
IMAGE_ENV="LANG=C.UTF-8 PYTHONUNBUFFERED=1"
