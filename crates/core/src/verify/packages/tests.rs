use super::findings::requirement_majors;
use super::*;

#[test]
fn requires_dist_lines_name_the_cuda_and_cudnn_majors() {
    // TensorFlow's extra, onnxruntime-gpu's extras, CUDA 13's unsuffixed names.
    assert_eq!(
        requirement_majors("nvidia-cudnn-cu12==8.9.4.25; extra == \"and-cuda\""),
        Some((
            "nvidia-cudnn-cu12".into(),
            Some("and-cuda".into()),
            Some(12),
            Some(8)
        ))
    );
    assert_eq!(
        requirement_majors("nvidia-cublas-cu12~=12.0; extra == 'cuda'"),
        Some((
            "nvidia-cublas-cu12".into(),
            Some("cuda".into()),
            Some(12),
            None
        ))
    );
    assert_eq!(
        requirement_majors("nvidia_cublas>=13.0"),
        Some(("nvidia-cublas".into(), None, Some(13), None))
    );
    assert_eq!(requirement_majors("numpy>=1.21"), None);
}

#[test]
fn the_probe_line_is_found_among_other_output() {
    let out = "Warning: something\nCUDA_SETUP_PACKAGES {\"python\": \"3.12.1\", \"packages\": [{\"name\": \"ctranslate2\", \"version\": \"4.5.0\"}]}\n";
    let p = parse_probe_output(out).unwrap();
    assert_eq!(p.installed("ctranslate2").unwrap().version, "4.5.0");
    assert!(parse_probe_output("no marker").is_none());
}

#[test]
fn wheels_and_torch_are_offered_with_their_cuda() {
    let wheels = [
        Wheel {
            name: "nvidia-cudnn-cu12".into(),
            version: "9.1.0.70".into(),
        },
        Wheel {
            name: "nvidia-cublas".into(),
            version: "13.1.0.3".into(),
        },
    ];
    let torch = crate::verify::doctor::TorchState {
        version: "2.5.1+cu124".into(),
        cuda: Some("12.4".into()),
        cudnn: Some(90100),
        ..Default::default()
    };
    let o = Offer::gather(&Found::default(), &wheels, Some(&torch));
    assert!(o.has_cuda(13) && o.has_cuda(12) && !o.has_cuda(11));
    assert!(o.has_cudnn(9, 12) && !o.has_cudnn(9, 11) && !o.has_cudnn(8, 12));
}
