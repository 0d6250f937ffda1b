"""``textnb table train|classify|sample`` through click's CliRunner: CSV out, one-line errors."""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from textnb.store import container as modelfile
from textnb.cli.table import table
from textnb.tables.model import TableNB

TABLES = Path(__file__).resolve().parent.parent / "corpora" / "tables"


def run(*args: str, input: str | None = None, env: dict | None = None):
    return CliRunner().invoke(table, [str(a) for a in args], input=input, env=env)


def ok(*args: str, input: str | None = None, env: dict | None = None):
    result = run(*args, input=input, env=env)
    assert result.exit_code == 0, result.output + result.stderr
    return result


def records(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def one_line_error(result, code: int = 1) -> str:
    """The error is one line ``Error: …`` on stderr with the exit code; no traceback."""
    assert result.exit_code == code, result.output
    lines = result.stderr.strip().splitlines()
    assert lines[-1].startswith("Error: ") and "Traceback" not in result.stderr
    if code == 1:
        assert len(lines) == 1 and result.stdout == ""
    return lines[-1]


@pytest.fixture
def tennis(tmp_path):
    path = tmp_path / "tennis.model"
    ok("train", TABLES / "playtennis.csv", "--target", "play", "-m", path, "-k", "0")
    return path


def test_train_classify_playtennis(tennis):
    """Mitchell, Machine Learning, ch. 6: ⟨sunny, cool, high, strong⟩ → no with P = .795; 004's
    ⟨rain, hot, high, false⟩ → no with .018286 / (.018286 + .010582)."""
    rows = "outlook,temperature,humidity,wind\nsunny,cool,high,strong\nrain,hot,high,weak\n"
    out = records(ok("classify", "-m", tennis, "-", input=rows).stdout)
    assert list(out[0]) == ["outlook", "temperature", "humidity", "wind", "predicted",
                            "P(no)", "P(yes)"]
    assert [r["predicted"] for r in out] == ["no", "no"]
    assert round(float(out[0]["P(no)"]), 3) == 0.795
    assert float(out[1]["P(no)"]) == pytest.approx(0.018286 / (0.018286 + 0.010582), rel=1e-4)
    assert float(out[0]["P(no)"]) + float(out[0]["P(yes)"]) == pytest.approx(1, abs=1e-5)


def test_train_reports_and_saves_a_table_model(tmp_path):
    path = tmp_path / "deep" / "m.model"
    result = ok("train", TABLES / "gender.csv", "-t", "sex", "-m", path,
                "--column", "weight=poisson", "-c", "foot_size=equal-width:3")
    assert result.stdout == (f"Saved table model to {path}: 8 rows, classes female, male; "
                             "columns height gaussian, weight poisson, foot_size equal-width.\n")
    meta, arrays = modelfile.load(path, "table")
    assert [c["kind"] for c in meta["columns"]] == ["gaussian", "poisson", "equal-width"]
    assert meta["target"] == "sex" and arrays["2.edges"].tolist() == [6, 8, 10, 12]


def test_model_options_reach_the_model(tmp_path):
    """--ddof 0 divides by n (the person example's E[(X − μ)²]); --bins and -k reach the binned column."""
    path = tmp_path / "m.model"
    ok("train", TABLES / "gender.csv", "-t", "sex", "-m", path, "--ddof", "0", "--bins", "2",
       "-c", "foot_size=equal-frequency", "-k", "0.5")
    model = TableNB.load(path)
    assert model.get_params()["ddof"] == 0 and model.get_params()["alpha"] == 0.5
    assert model.distributions_["height"].var[0] == pytest.approx(9.7225e-02 * 3 / 4, rel=1e-4)
    assert model.distributions_["foot_size"].edges.tolist() == [6, 10, 12]


def test_gender_given_prior_classify_from_file(tmp_path):
    """The person example (Wikipedia, Naive Bayes classifier): P(male) = 0.5 given; numerators 6.1984e-9 vs 5.3778e-4."""
    model, rows, out = tmp_path / "g.model", tmp_path / "rows.csv", tmp_path / "out.csv"
    ok("train", TABLES / "gender.csv", "-t", "sex", "-m", model,
       "--prior", "male=0.5", "--prior", "female=0.5")
    rows.write_text("height,weight,foot_size\n6,130,8\n")
    assert ok("classify", "-m", model, rows, "-o", out).stdout == ""
    (row,) = records(out.read_text())
    assert row["predicted"] == "female"
    assert float(row["P(male)"]) == pytest.approx(6.1984e-9 / (6.1984e-9 + 5.3778e-4), rel=2e-3)


def test_prior_takes_the_syntax_of_textnb_train_too(tmp_path):
    """--prior male=0.5,female=0.5 (textnb train's form) is --prior male=0.5 --prior female=0.5."""
    models = [tmp_path / "comma.model", tmp_path / "repeated.model"]
    ok("train", TABLES / "gender.csv", "-t", "sex", "-m", models[0], "--prior", "male=0.3,female=0.7")
    ok("train", TABLES / "gender.csv", "-t", "sex", "-m", models[1],
       "--prior", "male=0.3", "--prior", "female=0.7")
    priors = [dict(zip(TableNB.load(m).classes_.tolist(), TableNB.load(m).get_params()["class_prior"]))
              for m in models]
    assert priors[0] == priors[1] == {"female": 0.7, "male": 0.3}


def test_uniform_prior(tmp_path):
    model = tmp_path / "m.model"
    ok("train", TABLES / "lungcancer.csv", "-t", "cancer", "-w", "count", "-m", model,
       "--prior", "uniform")
    out = records(ok("sample", "-m", model, "-n", "4000", "--seed", "1").stdout)
    assert sum(r["cancer"] == "yes" for r in out) / 4000 == pytest.approx(0.5, abs=0.03)


def test_weighted_lung_cancer_with_explanations(tmp_path):
    """The lung cancer count table: the count column weights the 8 rows; --explain adds each
    column's log p(value|class): log(1100/1950) for gender = M given cancer = yes."""
    model = tmp_path / "m.model"
    ok("train", TABLES / "lungcancer.csv", "-t", "cancer", "--weight", "count", "-m", model,
       "-k", "0")
    out = records(ok("classify", "-m", model, "--explain", TABLES / "lungcancer.csv").stdout)
    assert len(out) == 8 and out[0]["cancer"] == "yes" and out[0]["count"] == "1000"
    assert float(out[0]["log p(gender|yes)"]) == pytest.approx(math.log(1100 / 1950), rel=1e-5)
    assert float(out[0]["log p(smoke|no)"]) == pytest.approx(math.log(10000 / 30000), rel=1e-5)
    # P(yes | M, Y) = 0.061·(1100/1950)(1800/1950) / (that + 0.939·(1/2)(1/3))
    yes = 1950 / 31950 * 1100 / 1950 * 1800 / 1950
    assert float(out[0]["P(yes)"]) == pytest.approx(yes / (yes + 30000 / 31950 / 6), rel=1e-5)


def test_sample_is_seeded_csv(tennis, tmp_path):
    first = ok("sample", "-m", tennis, "-n", "5", "--seed", "3").stdout
    assert first == ok("sample", "-m", tennis, "-n", "5", "--seed", "3").stdout
    out = records(first)
    assert len(out) == 5 and list(out[0]) == ["outlook", "temperature", "humidity", "wind",
                                              "play"]
    assert all(r["play"] in ("yes", "no") and r["outlook"] in ("sunny", "overcast", "rain")
               for r in out)
    assert first != ok("sample", "-m", tennis, "-n", "5", "--seed", "4").stdout
    path = tmp_path / "s.csv"
    assert ok("sample", "-m", tennis, "-n", "5", "--seed", "3", "-o", path).stdout == ""
    assert path.read_text() == first


def test_default_model_path_from_environment(tmp_path):
    env = {"TEXTNB_TABLE_MODEL": str(tmp_path / "env.model")}
    ok("train", TABLES / "meningitis.csv", "-t", "meningitis", env=env)
    assert (tmp_path / "env.model").exists()
    out = records(ok("classify", "-", input="headache,fever,vomiting\ntrue,false,true\n",
                     env=env).stdout)
    assert out[0]["predicted"] == "false"


def test_train_from_stdin(tmp_path):
    model = tmp_path / "m.model"
    ok("train", "-", "-t", "y", "-m", model, input="x,y\n1.0,a\n2.0,a\n5.0,b\n6.0,b\n")
    out = records(ok("classify", "-m", model, "-", input="x\n1.5\n5.5\n").stdout)
    assert [r["predicted"] for r in out] == ["a", "b"]


# -- errors: one line, the row and the column named ------------------------------------------

def test_missing_target_column(tmp_path):
    line = one_line_error(run("train", TABLES / "gender.csv", "-t", "gender", "-m",
                              tmp_path / "m"))
    assert line == (f"Error: {TABLES / 'gender.csv'}: no column 'gender'; the columns are "
                    "sex, height, weight, foot_size")
    assert not (tmp_path / "m").exists()


def test_ragged_row(tmp_path):
    line = one_line_error(run("train", "-", "-t", "c", "-m", tmp_path / "m",
                              input="a,b,c\n1,2,x\n3,4\n"))
    assert line == "Error: <stdin>: row 2 has 2 cells but the header has 3"


def test_a_header_without_rows_and_a_binary_file(tmp_path):
    """Both were 'internal error' (numpy's ~ of an empty float array; the csv module's
    "new-line character seen in unquoted field")."""
    line = one_line_error(run("train", "-", "-t", "sex", "-m", tmp_path / "m",
                              input="sex,height\n"))
    assert line == "Error: <stdin>: cannot fit on an empty table"
    blob = tmp_path / "blob.csv"
    blob.write_bytes(b"a,play\n" + bytes(range(256)) * 8)
    line = one_line_error(run("train", blob, "-t", "play", "-m", tmp_path / "m"))
    assert line.startswith(f"Error: {blob}: row ") and "cells but the header has 2" in line


def test_non_numeric_value_in_gaussian_column(tmp_path):
    data = "height,sex\n5.5,m\n6,m\ntall,f\n5,f\n"
    line = one_line_error(run("train", "-", "-t", "sex", "-m", tmp_path / "m",
                              "--column", "height=gaussian", input=data))
    assert line == "Error: <stdin>: row 3, column 'height': 'tall' is not a number"


def test_non_numeric_value_when_classifying(tmp_path):
    model = tmp_path / "g.model"
    ok("train", TABLES / "gender.csv", "-t", "sex", "-m", model)
    line = one_line_error(run("classify", "-m", model, "-",
                              input="height,weight,foot_size\n6,130,8\n5,heavy,7\n"))
    assert line == "Error: <stdin>: row 2, column 'weight': 'heavy' is not a number"
    line = one_line_error(run("classify", "-m", model, TABLES / "playtennis.csv"))
    assert "playtennis.csv: no column 'height'; the columns are outlook," in line


def test_bad_weight(tmp_path):
    line = one_line_error(run("train", "-", "-t", "y", "-w", "n", "-m", tmp_path / "m",
                              input="n,x,y\n3,a,p\n-1,b,q\n"))
    assert line == "Error: <stdin>: row 2, column 'n': -1 is not a weight ≥ 0"


def test_model_file_errors(tmp_path):
    line = one_line_error(run("classify", "-m", tmp_path / "none.model", TABLES / "gender.csv"))
    assert line == f"Error: model file '{tmp_path / 'none.model'}' does not exist"
    line = one_line_error(run("sample", "-m", TABLES / "gender.csv"))
    assert "is truncated or corrupt" in line


@pytest.mark.parametrize("args, message", [
    (["--column", "height=normal"], "unknown column kind 'normal'"),
    (["--column", "height"], "'height' is not NAME=KIND"),
    (["--prior", "male=0.5"], "no prior for class 'female'"),
    (["--prior", "man=0.5", "--prior", "female=0.5"], "'man' is not a class"),
    (["--prior", "male=-1", "--prior", "female=1"], "a prior must be ≥ 0"),
    (["--prior", "often"], "'often' is not learned, uniform or CLASS=P"),
    (["--prior", "uniform", "--prior", "male=1"], "not a mix"),
    (["--prior", "male=0.5,female=0.6"], "the priors sum to 1.1, not 1"),
    (["--prior", "male=0.2", "--prior", "female=0.2"], "the priors sum to 0.4, not 1"),
    (["-k", "-1"], "-1"),
])
def test_usage_errors_exit_2(tmp_path, args, message):
    result = run("train", TABLES / "gender.csv", "-t", "sex", "-m", tmp_path / "m", *args)
    assert message in one_line_error(result, code=2)
    assert not (tmp_path / "m").exists()


def test_missing_input_file_is_a_usage_error(tmp_path):
    line = one_line_error(run("train", tmp_path / "nope.csv", "-t", "x"), code=2)
    assert "No such file or directory" in line


def test_unseen_error_option(tmp_path, tennis):
    model = tmp_path / "strict.model"
    ok("train", TABLES / "playtennis.csv", "-t", "play", "-m", model, "--unseen", "error")
    rows = "outlook,temperature,humidity,wind\nfoggy,cool,high,strong\n"
    line = one_line_error(run("classify", "-m", model, "-", input=rows))
    assert line.startswith("Error: <stdin>: row 1, column 'outlook': 'foggy' was never seen")
    assert records(ok("classify", "-m", tennis, "-", input=rows).stdout)[0]["predicted"] == "no"
