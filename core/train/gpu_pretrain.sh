#!/usr/bin/env bash
# One GPU lease, several BERT runs side by side on the pre-tokenized training split (issue #15, item 3).
# Each RUN is "name trainer-arguments…"; without RUNs, session 9's pair:
#   base:  the shipped 4-layer/256 mini-bert-zh, continued (a drop-in replacement)
#   large: a 6-layer/384 BERT from scratch (fp16 ~27 MB, still inside the 60 MB asset budget)
# Every run exports fp16 safetensors every 1.5 minutes, so a run cut off still leaves weights. The results
# come back as a tar split in 15 MB pieces (the device tool returns at most 8 files of 16 MiB).
#
#   python -m core.train.bert --vocab assets/models/mini-bert-zh/vocab.txt --out /tmp/unused \
#       --whole-word 0.3 --save-tokens assets/models/.ckpt/corpus-tokens.xz        # here, once
#   bash core/train/gpu_pretrain.sh assets/models/.ckpt/corpus-tokens.xz "$OUT" 7.5 [RUN…]   # there
#   cat models.tar.* | tar -x -C <dir>                                             # here, after
#
# DEVICE=cpu runs the same commands on a CPU (a smoke test with a small token file and a short time).
set -u
tokens=$1
out=$2
minutes=${3:-7.5}
shift 3 || shift $#
runs=("$@")
if [ ${#runs[@]} -eq 0 ]; then
    runs=("base --whole-word 0.3 --init-from assets/models/mini-bert-zh --dropout 0 --lr 3e-4 --warmup 500"
          "large --whole-word 0.3 --layers 6 --hidden 384 --heads 6 --dropout 0.1 --lr 5e-4 --warmup 1500")
fi
device=${DEVICE:-cuda}
workers=$(( ( $(nproc) - 2 ) / ${#runs[@]} ))
[ "$workers" -ge 1 ] || workers=1
work=$(mktemp -d)
export PYTHONUNBUFFERED=1
python3 -c "import torch; print(torch.__version__, torch.cuda.get_device_name() if torch.cuda.is_available() else 'no GPU')"

common=(--vocab assets/models/mini-bert-zh/vocab.txt --tokens "$tokens" --device "$device"
        --bf16 --batch-size 256 --log-every 100 --export-every 1.5 --max-minutes "$minutes" --workers "$workers")
for run in "${runs[@]}"; do
    read -r -a words <<< "$run"
    name=${words[0]}
    python3 -m core.train.bert "${common[@]}" "${words[@]:1}" --out "$work/$name" \
        --checkpoint "$work/ckpt/$name.pt" > "$work/$name.log" 2>&1 &
done
wait
for run in "${runs[@]}"; do
    name=${run%% *}
    echo "== $name: $run"
    grep -v "Writing model shards" "$work/$name.log" | tail -n 20
done
rm -rf "$work/ckpt"  # optimizer state: not needed here, and too big to come back
tar -C "$work" -cf - . | split -b 15M - "$out/models.tar."
ls -la "$out"
