#!/bin/bash
source $(dirname ${BASH_SOURCE[0]})/config_common.sh
unset MICRO_BATCH_SIZE
export DGXNNODES=2
export DGXNGPU=4
export TENSOR_MODEL_PARALLEL=4
export PIPELINE_MODEL_PARALLEL=2
export FP4=True
