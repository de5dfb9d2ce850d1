"""What the objectives and home pages show (the pre-training objectives, classroom readiness), computed."""
