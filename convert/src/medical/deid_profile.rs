//! The DICOM PS3.15 Annex E Basic Application Level Confidentiality
//! Profile as one typed table (spec/convert.md "DICOM de-identification").
//!
//! [`TABLE`] is Table E.1-1 transcribed from the standard (441 rows): per
//! attribute, the basic profile's action and the action of four retain
//! options where the standard gives one. [`action`] resolves what
//! `convert-dicom --deidentify` does with an attribute under the chosen
//! [`RetainOptions`].

use dicom_core::Tag;

/// An action of Table E.1-1, with the combinations the standard uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// D: replace with a non-zero-length dummy value.
    Dummy,
    /// Z: replace with a zero-length value.
    Zero,
    /// X: remove.
    Remove,
    /// K: keep.
    Keep,
    /// C: clean (keep after removing identifying text).
    Clean,
    /// U: replace a UID with one consistent within the set of instances.
    Uid,
    /// X/Z: X unless Z is needed for the IOD's Type 2.
    RemoveOrZero,
    /// X/D: X unless D is needed for the IOD's Type 1.
    RemoveOrDummy,
    /// Z/D: Z unless D is needed for the IOD's Type 1.
    ZeroOrDummy,
    /// X/Z/D: X unless Z or D is needed for the IOD's type.
    RemoveZeroOrDummy,
    /// X/Z/U*: X unless Z or U is needed (sequences holding UIDs).
    RemoveZeroOrUid,
}

/// What happens to an attribute's value in the archive: the table's
/// action resolved for a record that is not itself an IOD (spec/convert.md
/// "DICOM de-identification": a combination resolves to its first action,
/// X where it has one; C resolves to X, as no text is cleaned).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolved {
    /// The value is kept as read.
    Keep,
    /// The attribute is left out.
    Remove,
    /// The value becomes zero-length.
    Empty,
    /// The value becomes a dummy of its VR.
    Dummy,
    /// The UID is replaced by a keyed hash (`deid_uid`).
    ReplaceUid,
}

impl Action {
    /// This action in the archive (see [`Resolved`]).
    pub fn resolve(self) -> Resolved {
        match self {
            Action::Keep => Resolved::Keep,
            Action::Dummy => Resolved::Dummy,
            Action::Zero | Action::ZeroOrDummy => Resolved::Empty,
            Action::Uid => Resolved::ReplaceUid,
            Action::Remove
            | Action::Clean
            | Action::RemoveOrZero
            | Action::RemoveOrDummy
            | Action::RemoveZeroOrDummy
            | Action::RemoveZeroOrUid => Resolved::Remove,
        }
    }
}

/// The retain options of PS3.15 E.3 that `convert-dicom` offers.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct RetainOptions {
    /// Retain Patient Characteristics Option (E.3.5): keep sex, age,
    /// size, weight and the like.
    pub retain_patient_characteristics: bool,
    /// Retain Longitudinal Temporal Information Full Dates Option (E.3.6):
    /// keep dates and times unchanged.
    pub retain_full_dates: bool,
    /// Retain Device Identity Option (E.3.3): keep station name, device
    /// serial number and the like.
    pub retain_device_identity: bool,
    /// Retain Institution Identity Option (E.3.4): keep institution name,
    /// address and department.
    pub retain_institution_identity: bool,
}

/// A code of CID 7050 "De-identification Method" (scheme DCM).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MethodCode {
    /// CodeValue.
    pub value: &'static str,
    /// CodeMeaning.
    pub meaning: &'static str,
}

/// The profile itself: 113100.
pub const BASIC_PROFILE: MethodCode = MethodCode {
    value: "113100",
    meaning: "Basic Application Confidentiality Profile",
};

impl RetainOptions {
    /// Which options are set, in the column order of [`Row::options`].
    fn set(&self) -> [bool; 4] {
        [
            self.retain_patient_characteristics,
            self.retain_full_dates,
            self.retain_device_identity,
            self.retain_institution_identity,
        ]
    }

    /// The CID 7050 codes of the profile and the options set, in that order.
    pub fn codes(&self) -> Vec<MethodCode> {
        const OPTIONS: [MethodCode; 4] = [
            MethodCode {
                value: "113108",
                meaning: "Retain Patient Characteristics Option",
            },
            MethodCode {
                value: "113106",
                meaning: "Retain Longitudinal Temporal Information Full Dates Option",
            },
            MethodCode {
                value: "113109",
                meaning: "Retain Device Identity Option",
            },
            MethodCode {
                value: "113112",
                meaning: "Retain Institution Identity Option",
            },
        ];
        let mut out = vec![BASIC_PROFILE];
        out.extend(
            OPTIONS
                .iter()
                .zip(self.set())
                .filter(|(_, on)| *on)
                .map(|(c, _)| *c),
        );
        out
    }
}

/// The attribute tags a row covers: `tag & mask == value & mask`
/// (Table E.1-1 writes repeating groups as `50xx`, `60xx`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TagPattern {
    group: u16,
    group_mask: u16,
    element: u16,
    element_mask: u16,
}

impl TagPattern {
    /// Whether `tag` is one of the tags this pattern covers.
    pub fn matches(&self, tag: Tag) -> bool {
        tag.group() & self.group_mask == self.group
            && tag.element() & self.element_mask == self.element
    }
}

/// One row of Table E.1-1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    /// The attribute (or repeating-group attributes).
    pub tag: TagPattern,
    /// The basic profile's action.
    pub basic: Action,
    /// The action of each retain option where the table gives one, in the
    /// order patient characteristics, full dates, device identity,
    /// institution identity.
    pub options: [Option<Action>; 4],
}

impl Row {
    /// The action under `retain`: a set option's column wins over the
    /// basic column (PS3.15 E.3); of several, the first (none of the
    /// table's rows fills two of these columns).
    pub fn action(&self, retain: &RetainOptions) -> Action {
        self.options
            .iter()
            .zip(retain.set())
            .find_map(|(a, on)| a.filter(|_| on))
            .unwrap_or(self.basic)
    }
}

/// The action for `tag`: private attributes (odd group) are removed
/// (Table E.1-1's last row); attributes the table does not list are kept.
pub fn action(tag: Tag, retain: &RetainOptions) -> Action {
    if tag.group() % 2 == 1 {
        return Action::Remove;
    }
    TABLE
        .iter()
        .find(|r| r.tag.matches(tag))
        .map_or(Action::Keep, |r| r.action(retain))
}

const fn row(group: u16, element: u16, basic: Action, options: [Option<Action>; 4]) -> Row {
    masked(group, 0xFFFF, element, 0xFFFF, basic, options)
}

const fn masked(
    group: u16,
    group_mask: u16,
    element: u16,
    element_mask: u16,
    basic: Action,
    options: [Option<Action>; 4],
) -> Row {
    Row {
        tag: TagPattern {
            group,
            group_mask,
            element,
            element_mask,
        },
        basic,
        options,
    }
}

const D: Action = Action::Dummy;
const Z: Action = Action::Zero;
const X: Action = Action::Remove;
const U: Action = Action::Uid;
const XZ: Action = Action::RemoveOrZero;
const XD: Action = Action::RemoveOrDummy;
const ZD: Action = Action::ZeroOrDummy;
const XZD: Action = Action::RemoveZeroOrDummy;
const XZU: Action = Action::RemoveZeroOrUid;
const K: Option<Action> = Some(Action::Keep);
const C: Option<Action> = Some(Action::Clean);
const O: Option<Action> = None;

/// PS3.15 Table E.1-1 (tag, basic action, [patient characteristics, full
/// dates, device identity, institution identity]); the comment is the
/// attribute's name.
#[rustfmt::skip]
pub const TABLE: [Row; 441] = [
    row(0x0000, 0x1000, X, [O, O, O, O]), // AffectedSOPInstanceUID
    row(0x0000, 0x1001, U, [O, O, O, O]), // RequestedSOPInstanceUID
    row(0x0002, 0x0003, U, [O, O, O, O]), // MediaStorageSOPInstanceUID
    row(0x0004, 0x1511, U, [O, O, O, O]), // ReferencedSOPInstanceUIDinFile
    row(0x0008, 0x0014, U, [O, O, O, O]), // InstanceCreatorUID
    row(0x0008, 0x0015, X, [O, K, O, O]), // InstanceCoercionDateTime
    row(0x0008, 0x0018, U, [O, O, O, O]), // SOPInstanceUID
    row(0x0008, 0x0020, Z, [O, K, O, O]), // StudyDate
    row(0x0008, 0x0021, XD, [O, K, O, O]), // SeriesDate
    row(0x0008, 0x0022, XZ, [O, K, O, O]), // AcquisitionDate
    row(0x0008, 0x0023, ZD, [O, K, O, O]), // ContentDate
    row(0x0008, 0x0024, X, [O, K, O, O]), // OverlayDate
    row(0x0008, 0x0025, X, [O, K, O, O]), // CurveDate
    row(0x0008, 0x002A, XZD, [O, K, O, O]), // AcquisitionDateTime
    row(0x0008, 0x0030, Z, [O, K, O, O]), // StudyTime
    row(0x0008, 0x0031, XD, [O, K, O, O]), // SeriesTime
    row(0x0008, 0x0032, XZ, [O, K, O, O]), // AcquisitionTime
    row(0x0008, 0x0033, ZD, [O, K, O, O]), // ContentTime
    row(0x0008, 0x0034, X, [O, K, O, O]), // OverlayTime
    row(0x0008, 0x0035, X, [O, K, O, O]), // CurveTime
    row(0x0008, 0x0050, Z, [O, O, O, O]), // AccessionNumber
    row(0x0008, 0x0058, U, [O, O, O, O]), // FailedSOPInstanceUIDList
    row(0x0008, 0x0080, XZD, [O, O, O, K]), // InstitutionName
    row(0x0008, 0x0081, X, [O, O, O, K]), // InstitutionAddress
    row(0x0008, 0x0082, XZD, [O, O, O, K]), // InstitutionCodeSequence
    row(0x0008, 0x0090, Z, [O, O, O, O]), // ReferringPhysiciansName
    row(0x0008, 0x0092, X, [O, O, O, O]), // ReferringPhysiciansAddress
    row(0x0008, 0x0094, X, [O, O, O, O]), // ReferringPhysiciansTelephoneNumbers
    row(0x0008, 0x0096, X, [O, O, O, O]), // ReferringPhysicianIdentificationSequence
    row(0x0008, 0x009C, Z, [O, O, O, O]), // ConsultingPhysiciansName
    row(0x0008, 0x009D, X, [O, O, O, O]), // ConsultingPhysicianIdentificationSequence
    row(0x0008, 0x0201, X, [O, K, O, O]), // TimezoneOffsetFromUTC
    row(0x0008, 0x1010, XZD, [O, O, K, O]), // StationName
    row(0x0008, 0x1030, X, [O, O, O, O]), // StudyDescription
    row(0x0008, 0x103E, X, [O, O, O, O]), // SeriesDescription
    row(0x0008, 0x1040, X, [O, O, O, K]), // InstitutionalDepartmentName
    row(0x0008, 0x1041, X, [O, O, O, K]), // InstitutionalDepartmentTypeCodeSequence
    row(0x0008, 0x1048, X, [O, O, O, O]), // Physician(s)ofRecord
    row(0x0008, 0x1049, X, [O, O, O, O]), // Physician(s)ofRecordIdentificationSequence
    row(0x0008, 0x1050, X, [O, O, O, O]), // PerformingPhysiciansName
    row(0x0008, 0x1052, X, [O, O, O, O]), // PerformingPhysicianIdentificationSequence
    row(0x0008, 0x1060, X, [O, O, O, O]), // NameofPhysician(s)ReadingStudy
    row(0x0008, 0x1062, X, [O, O, O, O]), // Physician(s)ReadingStudyIdentificationSequence
    row(0x0008, 0x1070, XZD, [O, O, O, O]), // OperatorsName
    row(0x0008, 0x1072, XD, [O, O, O, O]), // OperatorIdentificationSequence
    row(0x0008, 0x1080, X, [O, O, O, O]), // AdmittingDiagnosesDescription
    row(0x0008, 0x1084, X, [O, O, O, O]), // AdmittingDiagnosesCodeSequence
    row(0x0008, 0x1110, XZ, [O, O, O, O]), // ReferencedStudySequence
    row(0x0008, 0x1111, XZD, [O, O, O, O]), // ReferencedPerformedProcedureStepSequence
    row(0x0008, 0x1120, X, [O, O, O, O]), // ReferencedPatientSequence
    row(0x0008, 0x1140, XZU, [O, O, O, O]), // ReferencedImageSequence
    row(0x0008, 0x1155, U, [O, O, O, O]), // ReferencedSOPInstanceUID
    row(0x0008, 0x1195, U, [O, O, O, O]), // TransactionUID
    row(0x0008, 0x2111, X, [O, O, O, O]), // DerivationDescription
    row(0x0008, 0x2112, XZU, [O, O, O, O]), // SourceImageSequence
    row(0x0008, 0x3010, U, [O, O, O, O]), // IrradiationEventUID
    row(0x0008, 0x4000, X, [O, O, O, O]), // IdentifyingComments
    row(0x0010, 0x0010, Z, [O, O, O, O]), // PatientsName
    row(0x0010, 0x0020, Z, [O, O, O, O]), // PatientID
    row(0x0010, 0x0021, X, [O, O, O, O]), // IssuerofPatientID
    row(0x0010, 0x0030, Z, [O, O, O, O]), // PatientsBirthDate
    row(0x0010, 0x0032, X, [O, O, O, O]), // PatientsBirthTime
    row(0x0010, 0x0040, Z, [K, O, O, O]), // PatientsSex
    row(0x0010, 0x0050, X, [O, O, O, O]), // PatientsInsurancePlanCodeSequence
    row(0x0010, 0x0101, X, [O, O, O, O]), // PatientsPrimaryLanguageCodeSequence
    row(0x0010, 0x0102, X, [O, O, O, O]), // PatientsPrimaryLanguageModifierCodeSequence
    row(0x0010, 0x1000, X, [O, O, O, O]), // OtherPatientIDs
    row(0x0010, 0x1001, X, [O, O, O, O]), // OtherPatientNames
    row(0x0010, 0x1002, X, [O, O, O, O]), // OtherPatientIDsSequence
    row(0x0010, 0x1005, X, [O, O, O, O]), // PatientsBirthName
    row(0x0010, 0x1010, X, [K, O, O, O]), // PatientsAge
    row(0x0010, 0x1020, X, [K, O, O, O]), // PatientsSize
    row(0x0010, 0x1030, X, [K, O, O, O]), // PatientsWeight
    row(0x0010, 0x1040, X, [O, O, O, O]), // PatientsAddress
    row(0x0010, 0x1050, X, [O, O, O, O]), // InsurancePlanIdentification
    row(0x0010, 0x1060, X, [O, O, O, O]), // PatientsMothersBirthName
    row(0x0010, 0x1080, X, [O, O, O, O]), // MilitaryRank
    row(0x0010, 0x1081, X, [O, O, O, O]), // BranchofService
    row(0x0010, 0x1090, X, [O, O, O, O]), // MedicalRecordLocator
    row(0x0010, 0x1100, X, [O, O, O, O]), // ReferencedPatientPhotoSequence
    row(0x0010, 0x2000, X, [O, O, O, O]), // MedicalAlerts
    row(0x0010, 0x2110, X, [C, O, O, O]), // Allergies
    row(0x0010, 0x2150, X, [O, O, O, O]), // CountryofResidence
    row(0x0010, 0x2152, X, [O, O, O, O]), // RegionofResidence
    row(0x0010, 0x2154, X, [O, O, O, O]), // PatientsTelephoneNumbers
    row(0x0010, 0x2155, X, [O, O, O, O]), // PatientsTelecomInformation
    row(0x0010, 0x2160, X, [K, O, O, O]), // EthnicGroup
    row(0x0010, 0x2180, X, [O, O, O, O]), // Occupation
    row(0x0010, 0x21A0, X, [K, O, O, O]), // SmokingStatus
    row(0x0010, 0x21B0, X, [O, O, O, O]), // AdditionalPatientHistory
    row(0x0010, 0x21C0, X, [K, O, O, O]), // PregnancyStatus
    row(0x0010, 0x21D0, X, [O, K, O, O]), // LastMenstrualDate
    row(0x0010, 0x21F0, X, [O, O, O, O]), // PatientsReligiousPreference
    row(0x0010, 0x2203, XZ, [K, O, O, O]), // PatientsSexNeutered
    row(0x0010, 0x2297, X, [O, O, O, O]), // ResponsiblePerson
    row(0x0010, 0x2299, X, [O, O, O, O]), // ResponsibleOrganization
    row(0x0010, 0x4000, X, [O, O, O, O]), // PatientComments
    row(0x0012, 0x0010, D, [O, O, O, O]), // ClinicalTrialSponsorName
    row(0x0012, 0x0020, D, [O, O, O, O]), // ClinicalTrialProtocolID
    row(0x0012, 0x0021, Z, [O, O, O, O]), // ClinicalTrialProtocolName
    row(0x0012, 0x0030, Z, [O, O, O, K]), // ClinicalTrialSiteID
    row(0x0012, 0x0031, Z, [O, O, O, K]), // ClinicalTrialSiteName
    row(0x0012, 0x0040, D, [O, O, O, O]), // ClinicalTrialSubjectID
    row(0x0012, 0x0042, D, [O, O, O, O]), // ClinicalTrialSubjectReadingID
    row(0x0012, 0x0050, Z, [O, O, O, O]), // ClinicalTrialTimePointID
    row(0x0012, 0x0051, X, [O, O, O, O]), // ClinicalTrialTimePointDescription
    row(0x0012, 0x0060, Z, [O, O, O, K]), // ClinicalTrialCoordinatingCenterName
    row(0x0012, 0x0071, X, [O, O, O, O]), // ClinicalTrialSeriesID
    row(0x0012, 0x0072, X, [O, O, O, O]), // ClinicalTrialSeriesDescription
    row(0x0012, 0x0081, D, [O, O, O, K]), // ClinicalTrialProtocolEthicsCommitteeName
    row(0x0012, 0x0082, X, [O, O, O, O]), // ClinicalTrialProtocolEthicsCommitteeApprovalNumber
    row(0x0016, 0x002B, X, [O, O, O, O]), // MakerNote
    row(0x0016, 0x004B, X, [O, O, O, O]), // DeviceSettingDescription
    row(0x0016, 0x004D, X, [O, O, O, O]), // CameraOwnerName
    row(0x0016, 0x004E, X, [O, O, K, O]), // LensSpecification
    row(0x0016, 0x004F, X, [O, O, K, O]), // LensMake
    row(0x0016, 0x0050, X, [O, O, K, O]), // LensModel
    row(0x0016, 0x0051, X, [O, O, K, O]), // LensSerialNumber
    row(0x0016, 0x0070, X, [O, O, O, O]), // GPSVersionID
    row(0x0016, 0x0071, X, [O, O, O, O]), // GPSLatitude​Ref
    row(0x0016, 0x0072, X, [O, O, O, O]), // GPSLatitude​
    row(0x0016, 0x0073, X, [O, O, O, O]), // GPSLongitudeRef
    row(0x0016, 0x0074, X, [O, O, O, O]), // GPSLongitude
    row(0x0016, 0x0075, X, [O, O, O, O]), // GPSAltitude​Ref
    row(0x0016, 0x0076, X, [O, O, O, O]), // GPSAltitude​
    row(0x0016, 0x0077, X, [O, O, O, O]), // GPSTime​Stamp
    row(0x0016, 0x0078, X, [O, O, O, O]), // GPSSatellites
    row(0x0016, 0x0079, X, [O, O, O, O]), // GPSStatus
    row(0x0016, 0x007A, X, [O, O, O, O]), // GPSMeasure​Mode
    row(0x0016, 0x007B, X, [O, O, O, O]), // GPSDOP
    row(0x0016, 0x007C, X, [O, O, O, O]), // GPSSpeed​Ref
    row(0x0016, 0x007D, X, [O, O, O, O]), // GPSSpeed​
    row(0x0016, 0x007E, X, [O, O, O, O]), // GPSTrack​Ref
    row(0x0016, 0x007F, X, [O, O, O, O]), // GPSTrack
    row(0x0016, 0x0080, X, [O, O, O, O]), // GPSImg​DirectionRef
    row(0x0016, 0x0081, X, [O, O, O, O]), // GPSImg​Direction
    row(0x0016, 0x0082, X, [O, O, O, O]), // GPSMap​Datum
    row(0x0016, 0x0083, X, [O, O, O, O]), // GPSDest​LatitudeRef
    row(0x0016, 0x0084, X, [O, O, O, O]), // GPSDest​Latitude
    row(0x0016, 0x0085, X, [O, O, O, O]), // GPSDest​LongitudeRef
    row(0x0016, 0x0086, X, [O, O, O, O]), // GPSDest​Longitude
    row(0x0016, 0x0087, X, [O, O, O, O]), // GPSDest​BearingRef
    row(0x0016, 0x0088, X, [O, O, O, O]), // GPSDest​Bearing
    row(0x0016, 0x0089, X, [O, O, O, O]), // GPSDest​DistanceRef
    row(0x0016, 0x008A, X, [O, O, O, O]), // GPSDest​Distance
    row(0x0016, 0x008B, X, [O, O, O, O]), // GPSProcessing​Method
    row(0x0016, 0x008C, X, [O, O, O, O]), // GPSArea​Information
    row(0x0016, 0x008D, X, [O, K, O, O]), // GPSDate​Stamp
    row(0x0016, 0x008E, X, [O, O, O, O]), // GPSDifferential
    row(0x0018, 0x0010, ZD, [O, O, O, O]), // Contrast/BolusAgent
    row(0x0018, 0x1000, XZD, [O, O, K, O]), // DeviceSerialNumber
    row(0x0018, 0x1002, U, [O, O, K, O]), // DeviceUID
    row(0x0018, 0x1004, X, [O, O, K, O]), // PlateID
    row(0x0018, 0x1005, X, [O, O, K, O]), // GeneratorID
    row(0x0018, 0x1007, X, [O, O, K, O]), // CassetteID
    row(0x0018, 0x1008, X, [O, O, K, O]), // GantryID
    row(0x0018, 0x1009, X, [O, O, K, O]), // UniqueDeviceIdentifier
    row(0x0018, 0x100A, X, [O, O, K, O]), // UDISequence
    row(0x0018, 0x100B, U, [O, O, K, O]), // ManufacturersDeviceClassUID
    row(0x0018, 0x1030, XD, [O, O, O, O]), // ProtocolName
    row(0x0018, 0x1400, XD, [O, O, O, O]), // AcquisitionDeviceProcessingDescription
    row(0x0018, 0x2042, U, [O, O, O, O]), // TargetUID
    row(0x0018, 0x4000, X, [O, O, O, O]), // AcquisitionComments
    row(0x0018, 0x700A, XD, [O, O, K, O]), // DetectorID
    row(0x0018, 0x9185, X, [O, O, O, O]), // RespiratoryMotionCompensationTechniqueDescription
    row(0x0018, 0x9367, D, [O, O, K, O]), // X-RaySourceID
    row(0x0018, 0x9369, D, [O, K, O, O]), // SourceStartDateTime
    row(0x0018, 0x936A, D, [O, K, O, O]), // SourceEndDateTime
    row(0x0018, 0x9371, D, [O, O, K, O]), // X-RayDetectorID
    row(0x0018, 0x9373, X, [O, O, K, O]), // X-RayDetectorLabel
    row(0x0018, 0x937B, X, [O, O, O, O]), // Multi-energyAcquisitionDescription
    row(0x0018, 0x937F, X, [O, O, O, O]), // DecompositionDescription
    row(0x0018, 0x9424, X, [O, O, O, O]), // AcquisitionProtocolDescription
    row(0x0018, 0x9516, XD, [O, K, O, O]), // StartAcquisitionDateTime
    row(0x0018, 0x9517, XD, [O, K, O, O]), // EndAcquisitionDateTime
    row(0x0018, 0xA003, X, [O, O, O, O]), // ContributionDescription
    row(0x0020, 0x000D, U, [O, O, O, O]), // StudyInstanceUID
    row(0x0020, 0x000E, U, [O, O, O, O]), // SeriesInstanceUID
    row(0x0020, 0x0010, Z, [O, O, O, O]), // StudyID
    row(0x0020, 0x0052, U, [O, O, O, O]), // FrameofReferenceUID
    row(0x0020, 0x0200, U, [O, O, O, O]), // SynchronizationFrameofReferenceUID
    row(0x0020, 0x3401, X, [O, O, O, O]), // ModifyingDeviceID
    row(0x0020, 0x3406, X, [O, O, O, O]), // ModifiedImageDescription
    row(0x0020, 0x4000, X, [O, O, O, O]), // ImageComments
    row(0x0020, 0x9158, X, [O, O, O, O]), // FrameComments
    row(0x0020, 0x9161, U, [O, O, O, O]), // ConcatenationUID
    row(0x0020, 0x9164, U, [O, O, O, O]), // DimensionOrganizationUID
    row(0x0028, 0x1199, U, [O, O, O, O]), // PaletteColorLookupTableUID
    row(0x0028, 0x1214, U, [O, O, O, O]), // LargePaletteColorLookupTableUID
    row(0x0028, 0x4000, X, [O, O, O, O]), // ImagePresentationComments
    row(0x0032, 0x0012, X, [O, O, O, O]), // StudyIDIssuer
    row(0x0032, 0x1020, X, [O, O, K, O]), // ScheduledStudyLocation
    row(0x0032, 0x1021, X, [O, O, K, O]), // ScheduledStudyLocationAETitle
    row(0x0032, 0x1030, X, [O, O, O, O]), // ReasonforStudy
    row(0x0032, 0x1032, X, [O, O, O, O]), // RequestingPhysician
    row(0x0032, 0x1033, X, [O, O, O, O]), // RequestingService
    row(0x0032, 0x1060, XZ, [O, O, O, O]), // RequestedProcedureDescription
    row(0x0032, 0x1066, X, [O, O, O, O]), // ReasonforVisit
    row(0x0032, 0x1067, X, [O, O, O, O]), // ReasonforVisitCodeSequence
    row(0x0032, 0x1070, X, [O, O, O, O]), // RequestedContrastAgent
    row(0x0032, 0x4000, X, [O, O, O, O]), // StudyComments
    row(0x0034, 0x0001, D, [O, O, O, O]), // FlowIdentifierSequence
    row(0x0034, 0x0002, D, [O, O, O, O]), // FlowIdentifier
    row(0x0034, 0x0005, D, [O, O, O, O]), // SourceIdentifier
    row(0x0034, 0x0007, D, [O, K, O, O]), // FrameOriginTimestamp
    row(0x0038, 0x0004, X, [O, O, O, O]), // ReferencedPatientAliasSequence
    row(0x0038, 0x0010, X, [O, O, O, O]), // AdmissionID
    row(0x0038, 0x0011, X, [O, O, O, O]), // IssuerofAdmissionID
    row(0x0038, 0x0014, X, [O, O, O, O]), // IssuerofAdmissionIDSequence
    row(0x0038, 0x001E, X, [O, O, O, O]), // ScheduledPatientInstitutionResidence
    row(0x0038, 0x0020, X, [O, K, O, O]), // AdmittingDate
    row(0x0038, 0x0021, X, [O, K, O, O]), // AdmittingTime
    row(0x0038, 0x0040, X, [O, O, O, O]), // DischargeDiagnosisDescription
    row(0x0038, 0x0050, X, [C, O, O, O]), // SpecialNeeds
    row(0x0038, 0x0060, X, [O, O, O, O]), // ServiceEpisodeID
    row(0x0038, 0x0061, X, [O, O, O, O]), // IssuerofServiceEpisodeID
    row(0x0038, 0x0062, X, [O, O, O, O]), // ServiceEpisodeDescription
    row(0x0038, 0x0064, X, [O, O, O, O]), // IssuerofServiceEpisodeIDSequence
    row(0x0038, 0x0300, X, [O, O, O, O]), // CurrentPatientLocation
    row(0x0038, 0x0400, X, [O, O, O, O]), // PatientsInstitutionResidence
    row(0x0038, 0x0500, X, [C, O, O, O]), // PatientState
    row(0x0038, 0x4000, X, [O, O, O, O]), // VisitComments
    row(0x003A, 0x0310, U, [O, O, O, O]), // MultiplexGroupUID
    row(0x003A, 0x0314, D, [O, K, O, O]), // ImpedanceMeasurementDateTime
    row(0x0040, 0x0001, X, [O, O, K, O]), // ScheduledStationAETitle
    row(0x0040, 0x0002, X, [O, K, O, O]), // ScheduledProcedureStepStartDate
    row(0x0040, 0x0003, X, [O, K, O, O]), // ScheduledProcedureStepStartTime
    row(0x0040, 0x0004, X, [O, K, O, O]), // ScheduledProcedureStepEndDate
    row(0x0040, 0x0005, X, [O, K, O, O]), // ScheduledProcedureStepEndTime
    row(0x0040, 0x0006, X, [O, O, O, O]), // ScheduledPerformingPhysiciansName
    row(0x0040, 0x0007, X, [O, O, O, O]), // ScheduledProcedureStepDescription
    row(0x0040, 0x000B, X, [O, O, O, O]), // ScheduledPerformingPhysicianIdentificationSequence
    row(0x0040, 0x0010, X, [O, O, K, O]), // ScheduledStationName
    row(0x0040, 0x0011, X, [O, O, K, O]), // ScheduledProcedureStepLocation
    row(0x0040, 0x0012, X, [C, O, O, O]), // Pre-Medication
    row(0x0040, 0x0241, X, [O, O, K, O]), // PerformedStationAETitle
    row(0x0040, 0x0242, X, [O, O, K, O]), // PerformedStationName
    row(0x0040, 0x0243, X, [O, O, O, O]), // PerformedLocation
    row(0x0040, 0x0244, X, [O, K, O, O]), // PerformedProcedureStepStartDate
    row(0x0040, 0x0245, X, [O, K, O, O]), // PerformedProcedureStepStartTime
    row(0x0040, 0x0250, X, [O, K, O, O]), // PerformedProcedureStepEndDate
    row(0x0040, 0x0251, X, [O, K, O, O]), // PerformedProcedureStepEndTime
    row(0x0040, 0x0253, X, [O, O, O, O]), // PerformedProcedureStepID
    row(0x0040, 0x0254, X, [O, O, O, O]), // PerformedProcedureStepDescription
    row(0x0040, 0x0275, X, [O, O, O, O]), // RequestAttributesSequence
    row(0x0040, 0x0280, X, [O, O, O, O]), // CommentsonthePerformedProcedureStep
    row(0x0040, 0x050A, X, [O, O, O, O]), // SpecimenAccessionNumber
    row(0x0040, 0x0512, D, [O, O, O, O]), // ContainerIdentifier
    row(0x0040, 0x0513, Z, [O, O, O, O]), // IssueroftheContainerIdentifierSequence
    row(0x0040, 0x051A, X, [O, O, O, O]), // ContainerDescription
    row(0x0040, 0x0551, D, [O, O, O, O]), // SpecimenIdentifier
    row(0x0040, 0x0554, U, [O, O, O, O]), // SpecimenUID
    row(0x0040, 0x0555, XZ, [O, O, O, O]), // AcquisitionContextSequence
    row(0x0040, 0x0562, Z, [O, O, O, O]), // IssueroftheSpecimenIdentifierSequence
    row(0x0040, 0x0600, X, [O, O, O, O]), // SpecimenShortDescription
    row(0x0040, 0x0602, X, [O, O, O, O]), // SpecimenDetailedDescription
    row(0x0040, 0x0610, Z, [O, O, O, O]), // SpecimenPreparationSequence
    row(0x0040, 0x06FA, X, [O, O, O, O]), // SlideIdentifier
    row(0x0040, 0x1001, X, [O, O, O, O]), // RequestedProcedureID
    row(0x0040, 0x1002, X, [O, O, O, O]), // ReasonfortheRequestedProcedure
    row(0x0040, 0x1004, X, [O, O, O, O]), // PatientTransportArrangements
    row(0x0040, 0x1005, X, [O, O, O, O]), // RequestedProcedureLocation
    row(0x0040, 0x100A, X, [O, O, O, O]), // ReasonforRequestedProcedureCodeSequence
    row(0x0040, 0x1010, X, [O, O, O, O]), // NamesofIntendedRecipientsofResults
    row(0x0040, 0x1011, X, [O, O, O, O]), // IntendedRecipientsofResultsIdentificationSequence
    row(0x0040, 0x1101, D, [O, O, O, O]), // PersonIdentificationCodeSequence
    row(0x0040, 0x1102, X, [O, O, O, O]), // PersonsAddress
    row(0x0040, 0x1103, X, [O, O, O, O]), // PersonsTelephoneNumbers
    row(0x0040, 0x1104, X, [O, O, O, O]), // PersonsTelecomInformation
    row(0x0040, 0x1400, X, [O, O, O, O]), // RequestedProcedureComments
    row(0x0040, 0x2001, X, [O, O, O, O]), // ReasonfortheImagingServiceRequest
    row(0x0040, 0x2008, X, [O, O, O, O]), // OrderEnteredBy
    row(0x0040, 0x2009, X, [O, O, O, O]), // OrderEnterersLocation
    row(0x0040, 0x2010, X, [O, O, O, O]), // OrderCallbackPhoneNumber
    row(0x0040, 0x2011, X, [O, O, O, O]), // OrderCallbackTelecomInformation
    row(0x0040, 0x2016, Z, [O, O, O, O]), // PlacerOrderNumber/ImagingServiceRequest
    row(0x0040, 0x2017, Z, [O, O, O, O]), // FillerOrderNumber/ImagingServiceRequest
    row(0x0040, 0x2400, X, [O, O, O, O]), // ImagingServiceRequestComments
    row(0x0040, 0x3001, X, [O, O, O, O]), // ConfidentialityConstraintonPatientDataDescription
    row(0x0040, 0x4005, X, [O, K, O, O]), // ScheduledProcedureStepStartDateTime
    row(0x0040, 0x4008, X, [O, K, O, O]), // ScheduledProcedureStepExpirationDateTime
    row(0x0040, 0x4010, X, [O, K, O, O]), // ScheduledProcedureStepModificationDateTime
    row(0x0040, 0x4011, X, [O, K, O, O]), // ExpectedCompletionDateTime
    row(0x0040, 0x4023, U, [O, O, O, O]), // ReferencedGeneralPurposeScheduledProcedureStepTransactionUID
    row(0x0040, 0x4025, X, [O, O, K, O]), // ScheduledStationNameCodeSequence
    row(0x0040, 0x4027, X, [O, O, K, O]), // ScheduledStationGeographicLocationCodeSequence
    row(0x0040, 0x4028, X, [O, O, K, O]), // PerformedStationNameCodeSequence
    row(0x0040, 0x4030, X, [O, O, K, O]), // PerformedStationGeographicLocationCodeSequence
    row(0x0040, 0x4034, X, [O, O, O, O]), // ScheduledHumanPerformersSequence
    row(0x0040, 0x4035, X, [O, O, O, O]), // ActualHumanPerformersSequence
    row(0x0040, 0x4036, X, [O, O, O, O]), // HumanPerformersOrganization
    row(0x0040, 0x4037, X, [O, O, O, O]), // HumanPerformersName
    row(0x0040, 0x4050, X, [O, K, O, O]), // PerformedProcedureStepStartDateTime
    row(0x0040, 0x4051, X, [O, K, O, O]), // PerformedProcedureStepEndDateTime
    row(0x0040, 0x4052, X, [O, K, O, O]), // ProcedureStepCancellationDateTime
    row(0x0040, 0xA027, D, [O, O, O, O]), // VerifyingOrganization
    row(0x0040, 0xA073, D, [O, O, O, O]), // VerifyingObserverSequence
    row(0x0040, 0xA075, D, [O, O, O, O]), // VerifyingObserverName
    row(0x0040, 0xA078, X, [O, O, O, O]), // AuthorObserverSequence
    row(0x0040, 0xA07A, X, [O, O, O, O]), // ParticipantSequence
    row(0x0040, 0xA07C, X, [O, O, O, O]), // CustodialOrganizationSequence
    row(0x0040, 0xA088, Z, [O, O, O, O]), // VerifyingObserverIdentificationCodeSequence
    row(0x0040, 0xA123, D, [O, O, O, O]), // PersonName
    row(0x0040, 0xA124, U, [O, O, O, O]), // UID
    row(0x0040, 0xA171, U, [O, O, O, O]), // ObservationUID
    row(0x0040, 0xA172, U, [O, O, O, O]), // ReferencedObservationUID(Trial)
    row(0x0040, 0xA192, X, [O, K, O, O]), // ObservationDate(Trial)
    row(0x0040, 0xA193, X, [O, K, O, O]), // ObservationTime(Trial)
    row(0x0040, 0xA307, X, [O, O, O, O]), // CurrentObserver(Trial)
    row(0x0040, 0xA352, X, [O, O, O, O]), // VerbalSource(Trial)
    row(0x0040, 0xA353, X, [O, O, O, O]), // Address(Trial)
    row(0x0040, 0xA354, X, [O, O, O, O]), // TelephoneNumber(Trial)
    row(0x0040, 0xA358, X, [O, O, O, O]), // VerbalSourceIdentifierCodeSequence(Trial)
    row(0x0040, 0xA402, U, [O, O, O, O]), // ObservationSubjectUID(Trial)
    row(0x0040, 0xA730, D, [O, O, O, O]), // ContentSequence
    row(0x0040, 0xDB0C, U, [O, O, O, O]), // TemplateExtensionOrganizationUID
    row(0x0040, 0xDB0D, U, [O, O, O, O]), // TemplateExtensionCreatorUID
    row(0x0050, 0x001B, X, [O, O, O, O]), // ContainerComponentID
    row(0x0050, 0x0020, X, [O, O, K, O]), // DeviceDescription
    row(0x0050, 0x0021, X, [O, O, O, O]), // LongDeviceDescription
    row(0x0062, 0x0021, U, [O, O, O, O]), // TrackingUID
    row(0x0070, 0x0001, D, [O, O, O, O]), // GraphicAnnotationSequence
    row(0x0070, 0x0084, ZD, [O, O, O, O]), // ContentCreatorsName
    row(0x0070, 0x0086, X, [O, O, O, O]), // ContentCreatorsIdentificationCodeSequence
    row(0x0070, 0x031A, U, [O, O, O, O]), // FiducialUID
    row(0x0070, 0x1101, U, [O, O, O, O]), // PresentationDisplayCollectionUID
    row(0x0070, 0x1102, U, [O, O, O, O]), // PresentationSequenceCollectionUID
    row(0x0088, 0x0140, U, [O, O, O, O]), // StorageMediaFile-setUID
    row(0x0088, 0x0200, X, [O, O, O, O]), // IconImageSequence(seeNote12)
    row(0x0088, 0x0904, X, [O, O, O, O]), // TopicTitle
    row(0x0088, 0x0906, X, [O, O, O, O]), // TopicSubject
    row(0x0088, 0x0910, X, [O, O, O, O]), // TopicAuthor
    row(0x0088, 0x0912, X, [O, O, O, O]), // TopicKeywords
    row(0x0400, 0x0100, U, [O, O, O, O]), // DigitalSignatureUID
    row(0x0400, 0x0402, X, [O, O, O, O]), // ReferencedDigitalSignatureSequence
    row(0x0400, 0x0403, X, [O, O, O, O]), // ReferencedSOPInstanceMACSequence
    row(0x0400, 0x0404, X, [O, O, O, O]), // MAC
    row(0x0400, 0x0550, X, [O, O, O, O]), // ModifiedAttributesSequence
    row(0x0400, 0x0561, X, [O, O, O, O]), // OriginalAttributesSequence
    row(0x0400, 0x0600, X, [O, O, O, O]), // InstanceOriginStatus
    row(0x2030, 0x0020, X, [O, O, O, O]), // TextString
    row(0x2200, 0x0002, XZ, [O, O, O, O]), // LabelText
    row(0x2200, 0x0005, XZ, [O, O, O, O]), // BarcodeValue
    row(0x3006, 0x0024, U, [O, O, O, O]), // ReferencedFrameofReferenceUID
    row(0x3006, 0x00C2, U, [O, O, O, O]), // RelatedFrameofReferenceUID
    row(0x3008, 0x0054, XD, [O, K, O, O]), // FirstTreatmentDate
    row(0x3008, 0x0056, XD, [O, K, O, O]), // MostRecentTreatmentDate
    row(0x3008, 0x0105, XZ, [O, O, K, O]), // SourceSerialNumber
    row(0x3008, 0x0250, XD, [O, K, O, O]), // TreatmentDate
    row(0x3008, 0x0251, XD, [O, K, O, O]), // TreatmentTime
    row(0x300A, 0x0002, D, [O, O, O, O]), // RTPlanLabel
    row(0x300A, 0x0003, X, [O, O, O, O]), // RTPlanName
    row(0x300A, 0x0004, X, [O, O, O, O]), // RTPlanDescription
    row(0x300A, 0x0006, XD, [O, K, O, O]), // RTPlanDate
    row(0x300A, 0x0007, XD, [O, K, O, O]), // RTPlanTime
    row(0x300A, 0x000E, X, [O, O, O, O]), // PrescriptionDescription
    row(0x300A, 0x0013, U, [O, O, O, O]), // DoseReferenceUID
    row(0x300A, 0x0016, X, [O, O, O, O]), // DoseReferenceDescription
    row(0x300A, 0x0072, X, [O, O, O, O]), // FractionGroupDescription
    row(0x300A, 0x0083, U, [O, O, O, O]), // ReferencedDoseReferenceUID
    row(0x300A, 0x00B2, X, [O, O, K, O]), // TreatmentMachineName
    row(0x300A, 0x00C3, X, [O, O, O, O]), // BeamDescription
    row(0x300A, 0x00DD, X, [O, O, O, O]), // BolusDescription
    row(0x300A, 0x0196, X, [O, O, O, O]), // FixationDeviceDescription
    row(0x300A, 0x01A6, X, [O, O, O, O]), // ShieldingDeviceDescription
    row(0x300A, 0x01B2, X, [O, O, O, O]), // SetupTechniqueDescription
    row(0x300A, 0x0216, X, [O, O, K, O]), // SourceManufacturer
    row(0x300A, 0x02EB, X, [O, O, O, O]), // CompensatorDescription
    row(0x300A, 0x0608, D, [O, O, O, O]), // TreatmentPositionGroupLabel
    row(0x300A, 0x0609, U, [O, O, O, O]), // TreatmentPositionGroupUID
    row(0x300A, 0x0611, Z, [O, O, O, O]), // RTAccessoryHolderSlotID
    row(0x300A, 0x0615, Z, [O, O, O, O]), // RTAccessoryDeviceSlotID
    row(0x300A, 0x0619, D, [O, O, O, O]), // RadiationDoseIdentificationLabel
    row(0x300A, 0x0623, D, [O, O, O, O]), // RadiationDoseIn-VivoMeasurementLabel
    row(0x300A, 0x062A, D, [O, O, O, O]), // RTToleranceSetLabel
    row(0x300A, 0x0650, U, [O, O, O, O]), // PatientSetupUID
    row(0x300A, 0x0676, X, [O, O, O, O]), // EquipmentFrameofReferenceDescription
    row(0x300A, 0x067C, D, [O, O, O, O]), // RadiationGenerationModeLabel
    row(0x300A, 0x067D, Z, [O, O, O, O]), // RadiationGenerationModeDescription
    row(0x300A, 0x0700, U, [O, O, O, O]), // TreatmentSessionUID
    row(0x300A, 0x0734, D, [O, O, O, O]), // TreatmentToleranceViolationDescription
    row(0x300A, 0x0736, D, [O, K, O, O]), // TreatmentToleranceViolationDateTime
    row(0x300A, 0x073A, D, [O, K, O, O]), // RecordedRTControlPointDateTime
    row(0x300A, 0x0741, D, [O, K, O, O]), // InterlockDateTime
    row(0x300A, 0x0742, D, [O, O, O, O]), // InterlockDescription
    row(0x300A, 0x0760, D, [O, K, O, O]), // OverrideDateTime
    row(0x300A, 0x0783, D, [O, O, O, O]), // InterlockOriginDescription
    row(0x300C, 0x0113, X, [O, O, O, O]), // ReasonforOmissionDescription
    row(0x300E, 0x0008, XZ, [O, O, O, O]), // ReviewerName
    row(0x3010, 0x0006, U, [O, O, O, O]), // ConceptualVolumeUID
    row(0x3010, 0x000B, U, [O, O, O, O]), // ReferencedConceptualVolumeUID
    row(0x3010, 0x000F, Z, [O, O, O, O]), // ConceptualVolumeCombinationDescription
    row(0x3010, 0x0013, U, [O, O, O, O]), // ConstituentConceptualVolumeUID
    row(0x3010, 0x0015, U, [O, O, O, O]), // SourceConceptualVolumeUID
    row(0x3010, 0x0017, Z, [O, O, O, O]), // ConceptualVolumeDescription
    row(0x3010, 0x001B, Z, [O, O, O, O]), // DeviceAlternateIdentifier
    row(0x3010, 0x002D, D, [O, O, K, O]), // DeviceLabel
    row(0x3010, 0x0031, U, [O, O, O, O]), // ReferencedFiducialsUID
    row(0x3010, 0x0033, D, [O, O, O, O]), // UserContentLabel
    row(0x3010, 0x0034, D, [O, O, O, O]), // UserContentLongLabel
    row(0x3010, 0x0035, D, [O, O, O, O]), // EntityLabel
    row(0x3010, 0x0036, X, [O, O, O, O]), // EntityName
    row(0x3010, 0x0037, X, [O, O, O, O]), // EntityDescription
    row(0x3010, 0x0038, D, [O, O, O, O]), // EntityLongLabel
    row(0x3010, 0x003B, U, [O, O, O, O]), // RTTreatmentPhaseUID
    row(0x3010, 0x0043, Z, [O, O, K, O]), // ManufacturersDeviceIdentifier
    row(0x3010, 0x004C, XD, [O, K, O, O]), // IntendedPhaseStartDate
    row(0x3010, 0x004D, XD, [O, K, O, O]), // IntendedPhaseEndDate
    row(0x3010, 0x0054, D, [O, O, O, O]), // RTPrescriptionLabel
    row(0x3010, 0x0056, XD, [O, O, O, O]), // RTTreatmentApproachLabel
    row(0x3010, 0x005A, Z, [O, O, O, O]), // RTPhysicianIntentNarrative
    row(0x3010, 0x005C, Z, [O, O, O, O]), // ReasonforSuperseding
    row(0x3010, 0x0061, X, [O, O, O, O]), // PriorTreatmentDoseDescription
    row(0x3010, 0x006E, U, [O, O, O, O]), // DosimetricObjectiveUID
    row(0x3010, 0x006F, U, [O, O, O, O]), // ReferencedDosimetricObjectiveUID
    row(0x3010, 0x0077, D, [O, O, O, O]), // TreatmentSite
    row(0x3010, 0x007A, Z, [O, O, O, O]), // TreatmentTechniqueNotes
    row(0x3010, 0x007B, Z, [O, O, O, O]), // PrescriptionNotes
    row(0x3010, 0x007F, Z, [O, O, O, O]), // FractionationNotes
    row(0x3010, 0x0081, Z, [O, O, O, O]), // PrescriptionNotesSequence
    row(0x4000, 0x0010, X, [O, O, O, O]), // Arbitrary
    row(0x4000, 0x4000, X, [O, O, O, O]), // TextComments
    row(0x4008, 0x0042, X, [O, O, O, O]), // ResultsIDIssuer
    row(0x4008, 0x0102, X, [O, O, O, O]), // InterpretationRecorder
    row(0x4008, 0x010A, X, [O, O, O, O]), // InterpretationTranscriber
    row(0x4008, 0x010B, X, [O, O, O, O]), // InterpretationText
    row(0x4008, 0x010C, X, [O, O, O, O]), // InterpretationAuthor
    row(0x4008, 0x0111, X, [O, O, O, O]), // InterpretationApproverSequence
    row(0x4008, 0x0114, X, [O, O, O, O]), // PhysicianApprovingInterpretation
    row(0x4008, 0x0115, X, [O, O, O, O]), // InterpretationDiagnosisDescription
    row(0x4008, 0x0118, X, [O, O, O, O]), // ResultsDistributionListSequence
    row(0x4008, 0x0119, X, [O, O, O, O]), // DistributionName
    row(0x4008, 0x011A, X, [O, O, O, O]), // DistributionAddress
    row(0x4008, 0x0202, X, [O, O, O, O]), // InterpretationIDIssuer
    row(0x4008, 0x0300, X, [O, O, O, O]), // Impressions
    row(0x4008, 0x4000, X, [O, O, O, O]), // ResultsComments
    masked(0x5000, 0xFF00, 0x0000, 0x0000, X, [O, O, O, O]), // CurveData
    masked(0x6000, 0xFF00, 0x3000, 0xFFFF, X, [O, O, O, O]), // OverlayData
    masked(0x6000, 0xFF00, 0x4000, 0xFFFF, X, [O, O, O, O]), // OverlayComments
    row(0xFFFA, 0xFFFA, X, [O, O, O, O]), // DigitalSignaturesSequence
    row(0xFFFC, 0xFFFC, X, [O, O, O, O]), // DataSetTrailingPadding
];

#[cfg(test)]
mod tests {
    use super::*;
    use dicom_dictionary_std::tags;

    #[test]
    fn basic_actions_and_retain_options_follow_the_table() {
        let none = RetainOptions::default();
        assert_eq!(action(tags::PATIENT_NAME, &none), Action::Zero);
        assert_eq!(action(tags::PATIENT_AGE, &none), Action::Remove);
        assert_eq!(action(tags::STUDY_INSTANCE_UID, &none), Action::Uid);
        assert_eq!(
            action(tags::INSTITUTION_NAME, &none),
            Action::RemoveZeroOrDummy
        );
        assert_eq!(action(tags::MODALITY, &none), Action::Keep);
        assert_eq!(action(Tag(0x0009, 0x0010), &none), Action::Remove);
        assert_eq!(action(Tag(0x6002, 0x3000), &none), Action::Remove);
        let all = RetainOptions {
            retain_patient_characteristics: true,
            retain_full_dates: true,
            retain_device_identity: true,
            retain_institution_identity: true,
        };
        assert_eq!(action(tags::PATIENT_AGE, &all), Action::Keep);
        assert_eq!(action(tags::STUDY_DATE, &all), Action::Keep);
        assert_eq!(action(tags::STATION_NAME, &all), Action::Keep);
        assert_eq!(action(tags::INSTITUTION_NAME, &all), Action::Keep);
        assert_eq!(action(tags::PATIENT_NAME, &all), Action::Zero);
        assert_eq!(Tag(0x0010, 0x2110).group(), 0x0010);
        assert_eq!(
            action(Tag(0x0010, 0x2110), &all).resolve(),
            Resolved::Remove
        );
        let codes: Vec<_> = all.codes().iter().map(|c| c.value).collect();
        assert_eq!(codes, ["113100", "113108", "113106", "113109", "113112"]);
    }

    #[test]
    fn every_tag_has_one_row() {
        for (i, a) in TABLE.iter().enumerate() {
            for b in &TABLE[i + 1..] {
                assert_ne!(a.tag, b.tag);
            }
        }
    }
}
