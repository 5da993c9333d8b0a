#!/bin/bash
# t16c continued: Multi30k weighted higher still (5 -> 6), French news lower (3 -> 2); trunk then a linear decay
cd /work/main
exec nice -n 5 python -m train --preset cpu --init-from runs/t16c/model --out runs/t16d \
  --mixture tatoeba=1,multi30k=6,general=3,general.fr=2 --seed 11 \
  --max-steps 4500 --cooldown-steps 2000 --max-minutes ${MAX_MINUTES:-110} --checkpoint-every 500 \
  --concat-fraction 0.1 --copy-fraction 0.3 --number-copies 4 --spelling-fraction 1.0 \
  --subword-alpha 0.3 --subword-sides source
