#!/usr/bin/env bash
# One GPU lease, two BERT runs side by side on the pre-tokenized training split (issue #15, item 3):
#   base:  the shipped 4-layer/256 mini-bert-zh, continued (a drop-in replacement)
#   large: a 6-layer/384 BERT from scratch (fp16 ~27 MB, still inside the 60 MB asset budget)
# Both export fp16 safetensors every 1.5 minutes, so a run cut off still leaves weights. The results come
# back as a tar split in 15 MB pieces (the device tool returns at most 8 files of 16 MiB).
#
#   python -m core.train.bert --vocab assets/models/mini-bert-zh/vocab.txt --out /tmp/unused \
#       --whole-word 0.3 --save-tokens assets/models/.ckpt/corpus-tokens.xz        # here, once
#   bash core/train/gpu_pretrain.sh assets/models/.ckpt/corpus-tokens.xz "$OUT" 7.5   # there
#   cat models.tar.* | tar -x -C <dir>                                             # here, after
#
# DEVICE=cpu runs the same commands on a CPU (a smoke test with a small token file and a short time).
set -u
tokens=$1
out=$2
minutes=${3:-7.5}
device=${DEVICE:-cuda}
work=$(mktemp -d)
export PYTHONUNBUFFERED=1
python3 -c "import torch; print(torch.__version__, torch.cuda.get_device_name() if torch.cuda.is_available() else 'no GPU')"

common=(--vocab assets/models/mini-bert-zh/vocab.txt --tokens "$tokens" --whole-word 0.3 --device "$device"
        --bf16 --batch-size 256 --log-every 100 --export-every 1.5 --max-minutes "$minutes")
python3 -m core.train.bert "${common[@]}" --out "$work/base" --checkpoint "$work/ckpt/base.pt" \
    --init-from assets/models/mini-bert-zh --dropout 0 --lr 3e-4 --warmup 500 --workers 5 \
    > "$work/base.log" 2>&1 &
python3 -m core.train.bert "${common[@]}" --out "$work/large" --checkpoint "$work/ckpt/large.pt" \
    --layers 6 --hidden 384 --heads 6 --dropout 0.1 --lr 5e-4 --warmup 1500 --workers 7 \
    > "$work/large.log" 2>&1 &
wait
grep -v "Writing model shards" "$work/base.log" | tail -n 30
grep -v "Writing model shards" "$work/large.log" | tail -n 30
rm -rf "$work/ckpt"  # optimizer state: not needed here, and too big to come back
tar -C "$work" -cf - . | split -b 15M - "$out/models.tar."
ls -la "$out"
