#!/bin/bash
source $(dirname ${BASH_SOURCE[0]})/config_common.sh
export DGXNNODES=8
export DGXNGPU=8
export TENSOR_MODEL_PARALLEL=8
export PIPELINE_MODEL_PARALLEL=2
export CONTEXT_PARALLEL=1
export MINIBS=16
export FP8=True
export FP8_HYBRID=True
