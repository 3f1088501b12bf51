import os
import sys
from pathlib import Path

# one BLAS / OpenMP thread, as in every pipeline job: bit-identical results and no
# oversubscription of the machine's cores (set before numpy or torch is imported)
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
