"""Spine scenarios: three per modality (X-ray, CT, MRI)."""

from __future__ import annotations

from clineval.environments.radbench.knowledge import Quantity, Scenario

SCENARIOS: tuple[Scenario, ...] = (
    # --- X-ray ---
    Scenario(
        anatomy="Spine",
        modality="X-ray",
        disease="Adolescent idiopathic scoliosis",
        part="T5-T12 thoracic segment",
        symptom="right thoracic scoliotic curve",
        organ="thoracic spine",
        organ_dim="T5-T12 kyphosis angle",
        organ_quantity=Quantity(10, 30, "degrees", 0),
        anomaly_dim="Cobb angle",
        anomaly_quantity=Quantity(15, 45, "degrees", 0),
        indicator="Risser grade",
        indicator_values=("0", "1", "2"),
        finding=(
            "Standing whole-spine radiographs show a {symptom} spanning the {part}, with its apex at T8, a "
            "Cobb angle of {anomaly_quant} and rotation of the apical vertebra. On the lateral view the "
            "{organ} has a kyphosis of {organ_quant}. No congenital vertebral anomaly is seen."
        ),
        impression=(
            "Right thoracic curve of {anomaly_quant} ({part}), in keeping with adolescent idiopathic "
            "scoliosis."
        ),
        treatment=(
            "The patient is skeletally immature ({indicator} {indicator_value}). Curves under 25 degrees are "
            "observed with standing radiographs every 4 to 6 months, curves of 25 to 40 degrees are braced "
            "full-time (at least 18 hours a day), and curves beyond 45 to 50 degrees are referred for "
            "posterior spinal fusion."
        ),
        age=(10, 16),
        female_share=0.8,
        histories=(
            "Rapid growth over the past year",
            "Parent treated for scoliosis",
            "No neuromuscular disease",
        ),
        complaints=(
            "Uneven shoulders noticed by a parent",
            "Rib hump on forward bending at school screening",
            "Clothes hang unevenly at the waist",
        ),
    ),
    Scenario(
        anatomy="Spine",
        modality="X-ray",
        disease="Isthmic spondylolisthesis",
        part="L5 on S1",
        symptom="anterolisthesis",
        organ="lumbar spine",
        organ_dim="L1-S1 lordosis angle",
        organ_quantity=Quantity(45, 70, "degrees", 0),
        anomaly_dim="slip percentage",
        anomaly_quantity=Quantity(10, 45, "%", 0),
        indicator="Meyerding Grading of Spondylolisthesis",
        indicator_values=("Grade I", "Grade II"),
        finding=(
            "There is {symptom} of {part}, with a slip of {anomaly_quant} of the S1 endplate width and "
            "bilateral L5 pars interarticularis defects on the oblique views. The {organ} has an L1-S1 "
            "lordosis of {organ_quant}, and the L5-S1 disc space is narrowed."
        ),
        impression="Isthmic spondylolisthesis of {part} with bilateral L5 pars defects.",
        treatment=(
            "Low-grade ({indicator} {indicator_value}) isthmic spondylolisthesis is managed first with "
            "activity modification, core-stabilisation physiotherapy and analgesia. Fusion (posterolateral "
            "or interbody, with decompression if needed) is considered for pain persisting beyond 6 months, "
            "radiculopathy, neurological deficit or slip progression."
        ),
        age=(14, 55),
        female_share=0.4,
        histories=("Adolescent gymnast", "Heavy manual labourer", "Recurrent low back pain since school"),
        complaints=(
            "Low back pain worse on extension",
            "Tight hamstrings and buttock pain after sport",
            "Back pain radiating to the posterior thighs",
        ),
    ),
    Scenario(
        anatomy="Spine",
        modality="X-ray",
        disease="Osteoporotic vertebral compression fracture",
        part="L1 vertebral body",
        symptom="anterior wedge compression deformity",
        organ="T12 vertebral body",
        organ_dim="anterior height",
        organ_quantity=Quantity(22, 28, "mm"),
        anomaly_dim="anterior height loss",
        anomaly_quantity=Quantity(20, 40, "%", 0),
        indicator="Genant semiquantitative grade",
        indicator_values=("1 (mild)", "2 (moderate)"),
        finding=(
            "There is an {symptom} of the {part}, with {anomaly_quant} loss of anterior height; the "
            "posterior wall is intact, without retropulsion. The adjacent {organ} is of normal height, "
            "measuring {organ_quant} anteriorly. The bones are diffusely osteopenic."
        ),
        impression="Osteoporotic wedge compression fracture of the {part}.",
        treatment=(
            "Give analgesia and encourage early mobilisation, with an orthosis only for comfort. This "
            "fragility fracture ({indicator} {indicator_value}) establishes osteoporosis: arrange DXA and "
            "start antiresorptive therapy such as a bisphosphonate. Obtain MRI for neurological deficit, and "
            "consider vertebral augmentation only for refractory pain."
        ),
        age=(60, 92),
        female_share=0.75,
        histories=("Long-term oral glucocorticoids", "Previous wrist fragility fracture", "Known osteopenia"),
        complaints=(
            "Sudden mid-back pain after lifting a box",
            "Loss of height and stooped posture",
            "Back pain worse on standing, eased lying down",
        ),
    ),
    # --- CT ---
    Scenario(
        anatomy="Spine",
        modality="CT",
        disease="Burst fracture",
        part="L1 vertebral body",
        symptom="comminuted burst fracture",
        organ="T12-L2 segment",
        organ_dim="segmental kyphosis angle",
        organ_quantity=Quantity(5, 25, "degrees", 0),
        anomaly_dim="spinal canal compromise",
        anomaly_quantity=Quantity(20, 60, "%", 0),
        indicator="Thoracolumbar Injury Classification and Severity Score (TLICS)",
        indicator_values=("2", "4", "5"),
        finding=(
            "There is a {symptom} of the {part} involving both endplates and the posterior wall, with a "
            "retropulsed posterosuperior fragment causing {anomaly_quant} spinal canal compromise. The "
            "interpedicular distance is widened. Segmental kyphosis of the {organ} measures {organ_quant}."
        ),
        impression="Burst fracture of the {part} with retropulsion and {anomaly_quant} canal compromise.",
        treatment=(
            "Management follows the {indicator} of {indicator_value}: 3 or less supports non-operative care "
            "with early mobilisation and upright radiographs, 4 is indeterminate, and 5 or more favours "
            "posterior stabilisation, adding decompression for an incomplete neurological deficit. Obtain "
            "MRI to assess the posterior ligamentous complex."
        ),
        age=(18, 60),
        female_share=0.3,
        histories=(
            "Fall from a roof",
            "High-speed motor vehicle collision",
            "No significant past medical history",
        ),
        complaints=(
            "Severe back pain after a fall from height",
            "Back pain and tingling in both legs after a crash",
            "Unable to stand because of back pain",
        ),
    ),
    Scenario(
        anatomy="Spine",
        modality="CT",
        disease="Ossification of posterior longitudinal ligament (OPLL)",
        part="posterior margin of the C3 to C6 vertebral bodies",
        symptom="continuous ossification of the posterior longitudinal ligament",
        organ="cervical spinal canal",
        organ_dim="residual anteroposterior diameter",
        organ_quantity=Quantity(6, 11, "mm"),
        anomaly_dim="canal occupying ratio",
        anomaly_quantity=Quantity(30, 55, "%", 0),
        indicator="Nurick grade",
        indicator_values=("1", "2", "3"),
        finding=(
            "There is {symptom} along the {part}, thickest at C4-C5, with a canal occupying ratio of "
            "{anomaly_quant}. The residual anteroposterior diameter of the {organ} is {organ_quant} at the "
            "narrowest level. Cervical lordosis is preserved and the ossified mass does not cross the "
            "K-line."
        ),
        impression="Continuous-type OPLL from C3 to C6 with significant canal stenosis.",
        treatment=(
            "Myelopathy is {indicator} {indicator_value}. Surgical decompression is recommended for moderate "
            "or progressive myelopathy and may be offered for mild myelopathy; with preserved lordosis, a "
            "K-line-positive lesion and an occupying ratio under 60%, posterior laminoplasty is appropriate. "
            "Counsel avoidance of falls and neck hyperextension injuries."
        ),
        age=(50, 78),
        female_share=0.33,
        histories=("Type 2 diabetes", "Diffuse idiopathic skeletal hyperostosis", "East Asian ancestry"),
        complaints=(
            "Clumsy hands and difficulty with buttons",
            "Numbness in both hands",
            "Unsteady gait over several months",
        ),
    ),
    Scenario(
        anatomy="Spine",
        modality="CT",
        disease="Odontoid fracture",
        part="odontoid process of C2",
        symptom="transverse fracture",
        organ="prevertebral soft tissue at C2",
        organ_dim="thickness",
        organ_quantity=Quantity(8, 14, "mm"),
        anomaly_dim="displacement",
        anomaly_quantity=Quantity(1, 6, "mm"),
        indicator="Anderson and D'Alonzo Fracture Classification",
        indicator_values=("Type II", "Type III"),
        finding=(
            "There is a {symptom} of the {part}, with the dens fragment displaced {anomaly_quant} "
            "posteriorly relative to the C2 body. The atlantodental interval is preserved and the C1 ring is "
            "intact. The {organ} measures {organ_quant}, in keeping with haematoma."
        ),
        impression="Acute posteriorly displaced fracture of the {part}.",
        treatment=(
            "For this {indicator} {indicator_value} fracture: type III fractures usually heal in a rigid "
            "collar for about 12 weeks, whereas type II fractures in older adults carry a high non-union "
            "risk and surgical fixation (posterior C1-C2 fusion or anterior odontoid screw) is considered, "
            "especially with displacement of 5 mm or more; frail patients may accept collar treatment."
        ),
        age=(65, 95),
        female_share=0.5,
        histories=("Ground-level fall at home", "Osteoporosis", "Anticoagulated for atrial fibrillation"),
        complaints=(
            "Upper neck pain after a fall",
            "Holding the head with both hands",
            "Neck pain with occipital headache",
        ),
    ),
    # --- MRI ---
    Scenario(
        anatomy="Spine",
        modality="MRI",
        disease="Lumbar disc herniation",
        part="L4-L5 level",
        symptom="disc extrusion",
        organ="L4-L5 intervertebral disc",
        organ_dim="height",
        organ_quantity=Quantity(6, 10, "mm"),
        anomaly_dim="anteroposterior extent",
        anomaly_quantity=Quantity(5, 12, "mm"),
        indicator="Pfirrmann Grading Scale for Disc Degeneration",
        indicator_values=("Grade III", "Grade IV"),
        finding=(
            "There is a left paracentral {symptom} at the {part}, projecting {anomaly_quant} beyond the disc "
            "margin into the left lateral recess and compressing the traversing left L5 nerve root. The "
            "{organ} is desiccated, with a height of {organ_quant}. The conus and cauda equina are normal."
        ),
        impression="Left paracentral {symptom} at the {part} compressing the traversing left L5 nerve root.",
        treatment=(
            "Treat conservatively for about 6 weeks with analgesia, physiotherapy and staying active, adding "
            "a transforaminal epidural steroid injection for persistent radicular pain. Offer "
            "microdiscectomy for disabling radicular pain beyond 6 to 12 weeks or a progressive motor "
            "deficit, and urgent decompression for cauda equina syndrome."
        ),
        age=(25, 55),
        female_share=0.4,
        histories=("Sedentary office work", "Heavy lifting at work", "Previous episodes of low back pain"),
        complaints=(
            "Left leg pain radiating to the top of the foot",
            "Numbness over the left big toe",
            "Sciatica worse on sitting and coughing",
        ),
    ),
    Scenario(
        anatomy="Spine",
        modality="MRI",
        disease="Cervical spondylotic myelopathy",
        part="C5-C6 level",
        symptom="intramedullary T2 hyperintensity",
        organ="cervical spinal cord",
        organ_dim="anteroposterior diameter",
        organ_quantity=Quantity(3.5, 6.0, "mm"),
        anomaly_dim="craniocaudal length",
        anomaly_quantity=Quantity(5, 15, "mm"),
        indicator="Modified Japanese Orthopaedic Association (mJOA) score",
        indicator_values=("15 (mild)", "13 (moderate)", "10 (severe)"),
        finding=(
            "At the {part}, a disc-osteophyte complex and ligamentum flavum thickening cause severe central "
            "canal stenosis with effacement of CSF. The {organ} is compressed to an anteroposterior diameter "
            "of {organ_quant}, with {symptom} extending {anomaly_quant} craniocaudally."
        ),
        impression="Degenerative cord compression at the {part} with {symptom}, consistent with myelopathy.",
        treatment=(
            "Severity is {indicator} {indicator_value}. Surgical decompression is recommended for moderate "
            "and severe myelopathy and is offered for mild myelopathy as an alternative to supervised "
            "rehabilitation; anterior discectomy and fusion or posterior decompression is chosen by the "
            "number of levels and sagittal alignment."
        ),
        age=(50, 80),
        female_share=0.35,
        histories=("Long-standing neck pain", "Type 2 diabetes", "Previous whiplash injury"),
        complaints=(
            "Clumsy hands and dropping objects",
            "Gait unsteadiness and frequent tripping",
            "Numb hands with difficulty writing",
        ),
    ),
    Scenario(
        anatomy="Spine",
        modality="MRI",
        disease="Metastatic epidural spinal cord compression",
        part="T8 level",
        symptom="epidural tumour extension",
        organ="thoracic spinal cord",
        organ_dim="anteroposterior diameter",
        organ_quantity=Quantity(3.0, 5.0, "mm"),
        anomaly_dim="maximal thickness",
        anomaly_quantity=Quantity(5, 12, "mm"),
        indicator="Bilsky epidural spinal cord compression grade",
        indicator_values=("2", "3"),
        finding=(
            "The T8 vertebral body and left pedicle are replaced by T1-hypointense, enhancing tumour. There "
            "is {symptom} at the {part}, up to {anomaly_quant} thick, and the {organ} is compressed to an "
            "anteroposterior diameter of {organ_quant}. No other level shows cord compression."
        ),
        impression="Metastatic epidural spinal cord compression at the {part}.",
        treatment=(
            "Start dexamethasone and refer urgently to the spinal oncology team. For high-grade compression "
            "({indicator} {indicator_value}), radioresistant tumours are treated with separation surgery and "
            "stabilisation followed by stereotactic body radiotherapy, and radiosensitive tumours such as "
            "myeloma or lymphoma with conventional radiotherapy."
        ),
        age=(45, 85),
        female_share=0.45,
        histories=("Metastatic non-small cell lung cancer", "Renal cell carcinoma", "Multiple myeloma"),
        complaints=(
            "Progressive thoracic back pain worse at night",
            "Band-like chest pain and leg weakness",
            "New difficulty walking with numb legs",
        ),
    ),
)
