"""Local image builds as the batch's "preparing engines" step sees them: docker build output
streamed to the build listener as it comes, a failing step an ImageBuildError with the output."""
import pytest

from benchlib.containers import images
from benchlib.host.docker_host import docker_client
from benchlib.core.errors import ImageBuildError

pytestmark = pytest.mark.docker


@pytest.fixture
def build_dir(tmp_path):
    images.ensure_base_image("trixie")  # cached after the first build on a host (~30 s once)
    yield tmp_path
    for ref in ("benchlib/test-stream:ok", "benchlib/test-stream:fails"):
        try:
            docker_client().images.remove(ref, force=True)
        except Exception:  # never built (the failing one) or already gone
            pass


def test_a_build_reports_its_stage_and_output_lines_while_it_runs(build_dir):
    (build_dir / "Dockerfile").write_text("ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nRUN echo benchlib-build-says-hello\n")
    seen = []
    with images.reporting_builds(lambda text, stage: seen.append((stage, text))):
        image = images._build(docker_client(), build_dir, "benchlib/test-stream:ok",
                              {"BASE_IMAGE": images.base_image_ref("trixie")})
    assert image.id.startswith("sha256:")
    assert seen[0] == (True, f"docker build benchlib/test-stream:ok from {build_dir.name}/Dockerfile")
    output = [text for stage, text in seen if not stage]
    assert any(text.startswith("Step 2/5 : FROM") for text in output), output
    assert "benchlib-build-says-hello" in output


def test_a_failing_step_raises_with_the_build_output(build_dir):
    (build_dir / "Dockerfile").write_text("ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nRUN echo about-to-fail && false\n")
    with pytest.raises(ImageBuildError, match=r"(?s)building benchlib/test-stream:fails .* failed: .*"
                                              r"returned a non-zero code: 1.*about-to-fail"):
        images._build(docker_client(), build_dir, "benchlib/test-stream:fails",
                      {"BASE_IMAGE": images.base_image_ref("trixie")})
    assert images._get_image(docker_client(), "benchlib/test-stream:fails") is None
